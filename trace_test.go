package informer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

func TestEmitOnANilHookDoesNothing(t *testing.T) {
	var h informer.TraceHook
	assert.NotPanics(t, func() { h.Emit(informer.TraceEvent{Kind: "list"}) })
}

func TestEmitStampsTheTimeOnlyWhenMissing(t *testing.T) {
	var got []informer.TraceEvent
	h := informer.TraceHook(func(e informer.TraceEvent) { got = append(got, e) })

	before := time.Now()
	h.Emit(informer.TraceEvent{Kind: "list"})
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h.Emit(informer.TraceEvent{Kind: "watch", Time: fixed})

	require.Len(t, got, 2)
	assert.False(t, got[0].Time.Before(before), "Emit sets a missing time to now")
	assert.Equal(t, fixed, got[1].Time, "Emit keeps a time the emitter set")
}

func TestTeeDeliversToEveryHookInOrderAndSkipsNil(t *testing.T) {
	var order []string
	a := informer.TraceHook(func(e informer.TraceEvent) { order = append(order, "a:"+e.Kind) })
	b := informer.TraceHook(func(e informer.TraceEvent) { order = append(order, "b:"+e.Kind) })

	informer.Tee(a, nil, b).Emit(informer.TraceEvent{Kind: "queued"})
	assert.Equal(t, []string{"a:queued", "b:queued"}, order)
}

func TestTeeOfOnlyNilHooksIsNilSoTracingStaysFree(t *testing.T) {
	assert.Nil(t, informer.Tee())
	assert.Nil(t, informer.Tee(nil, nil))
}
