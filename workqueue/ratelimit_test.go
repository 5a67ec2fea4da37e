package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddRateLimitedAddsTheKeyAfterTheLimitersDelay(t *testing.T) {
	q, clock := newFake(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
	for n, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		q.AddRateLimited("a")
		assert.Equal(t, n+1, q.NumRequeues("a"))
		clock.Step(delay - time.Nanosecond)
		require.Equal(t, 0, q.Len(), "retry %d came early", n+1)
		clock.Step(time.Nanosecond)
		require.Equal(t, 1, q.Len(), "retry %d is due", n+1)
		require.Equal(t, "a", mustGet(t, q))
		q.Done("a")
	}
}

func TestForgetStartsTheBackoffOver(t *testing.T) {
	q, clock := newFake(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
	q.AddRateLimited("a") // 1s
	q.AddRateLimited("a") // 2s, but "a" already waits for 1s: the earlier wins
	q.Forget("a")
	assert.Equal(t, 0, q.NumRequeues("a"))
	assert.Equal(t, 0, q.Len(), "Forget does not remove a key from the queue or the heap")
	clock.Step(time.Second)
	assert.Equal(t, 1, q.Len())

	mustGet(t, q)
	q.AddRateLimited("a")
	q.Done("a")
	clock.Step(time.Second)
	assert.Equal(t, 1, q.Len(), "after Forget the next retry waits the base delay again")
}

func TestTheDefaultRateLimiterIsUsedWhenNoneIsGiven(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.AddRateLimited("a")
	clock.Step(5*time.Millisecond - 1)
	assert.Equal(t, 0, q.Len())
	clock.Step(1)
	assert.Equal(t, 1, q.Len(), "the first retry of the default limiter waits 5ms")
}
