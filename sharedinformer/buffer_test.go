package sharedinformer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingKeepsOrderAcrossGrowthAndWrapAround(t *testing.T) {
	r := newRing[int](4)
	next, want := 0, 0
	for round := range 50 {
		for range round % 7 { // push a few
			r.push(next)
			next++
		}
		for range round % 5 { // pop a few
			if got, ok := r.pop(); ok {
				require.Equal(t, want, got)
				want++
			}
		}
	}
	for got, ok := r.pop(); ok; got, ok = r.pop() {
		require.Equal(t, want, got)
		want++
	}
	assert.Equal(t, next, want, "every pushed item popped once, in order")
}

func TestRingShrinksBackAfterABurst(t *testing.T) {
	r := newRing[int](8)
	for i := range 1000 {
		r.push(i)
	}
	assert.GreaterOrEqual(t, r.cap(), 1000)
	for range 1000 {
		_, ok := r.pop()
		require.True(t, ok)
	}
	assert.Equal(t, 8, r.cap(), "the memory of a burst is given back")
	_, ok := r.pop()
	assert.False(t, ok)
}
