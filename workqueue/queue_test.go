package workqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGetHandsOutKeysInTheOrderTheyWereFirstAdded(t *testing.T) {
	q, _ := newFake(Options[string]{})
	for _, key := range []string{"c", "a", "b", "a", "c"} {
		q.Add(key)
	}
	require.Equal(t, 3, q.Len(), "a key waiting once is not added twice")
	assert.Equal(t, []string{"c", "a", "b"}, []string{mustGet(t, q), mustGet(t, q), mustGet(t, q)},
		"a second Add does not move a key")
}

func TestAddOfAKeyBeingProcessedIsPostponedUntilDone(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	require.Equal(t, "a", mustGet(t, q))

	q.Add("a")
	q.Add("a")
	assert.Equal(t, 0, q.Len(), "a held key is not queued, so no second worker can get it")
	_, err := getWithin(q, time.Millisecond)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	q.Done("a")
	assert.Equal(t, 1, q.Len(), "Done queues the postponed key, once")
	assert.Equal(t, "a", mustGet(t, q))
	q.Done("a")
	assert.Equal(t, 0, q.Len(), "and nothing more")
}

func TestDoneOfAKeyThatNoWorkerHoldsDoesNothing(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	q.Done("a") // queued, not held
	q.Done("b") // unknown
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, "a", mustGet(t, q))
}

func TestGetBlocksUntilAKeyIsAdded(t *testing.T) {
	q, _ := newFake(Options[string]{})
	got := make(chan string)
	go func() { key, _ := getWithin(q, time.Minute); got <- key }()
	q.Add("a")
	assert.Equal(t, "a", <-got)
}

func TestGetReturnsTheContextErrorWhenTheContextEndsWhileWaiting(t *testing.T) {
	q, _ := newFake(Options[string]{})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error)
	go func() {
		_, err := q.Get(ctx)
		errs <- err
	}()
	cancel()
	assert.ErrorIs(t, <-errs, context.Canceled)

	q.Add("a")
	assert.Equal(t, "a", mustGet(t, q), "the cancelled Get took nothing")
}

func TestGetWithADoneContextReturnsAtOnceEvenIfKeysAreQueued(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := q.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, q.Len())
}

func TestEveryBlockedGetGetsAKeyWhenKeysArrive(t *testing.T) {
	const waiters = 8
	q, _ := newFake(Options[int]{})
	got := make(chan int, waiters)
	for range waiters {
		go func() { key, _ := getWithin(q, time.Minute); got <- key }()
	}
	for k := range waiters {
		q.Add(k)
	}
	seen := map[int]bool{}
	for range waiters {
		seen[<-got] = true
	}
	assert.Len(t, seen, waiters, "each Signal woke a different waiter; no key was handed out twice")
}

func TestNewTakesANilPointerAsRateLimiterOrClockForTheDefault(t *testing.T) {
	var limiter *BucketRateLimiter[string] // a constructor whose error was ignored
	var clock *FakeClock
	q := New(Options[string]{RateLimiter: limiter, Clock: clock})
	defer q.ShutDown()
	assert.NotPanics(t, func() { q.AddRateLimited("a") })
	assert.Equal(t, 1, q.NumRequeues("a"), "the default limiter counted the retry")
}
