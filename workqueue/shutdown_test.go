package workqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShutDownIgnoresNewKeysButStillHandsOutQueuedOnes(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	require.True(t, q.ShuttingDown())

	q.Add("c")
	q.AddAfter("d", time.Second)
	q.AddRateLimited("e")
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, 0, q.NumRequeues("e"), "a dropped AddRateLimited counts no failure")

	assert.Equal(t, "a", mustGet(t, q))
	assert.Equal(t, "b", mustGet(t, q))
	_, err := q.Get(context.Background())
	assert.ErrorIs(t, err, ErrShutDown, "nothing is left, so Get does not block")
	q.ShutDown() // again: nothing happens
}

func TestGetReportsShutDownOnlyAfterPostponedKeysAreHandedOut(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	require.Equal(t, "a", mustGet(t, q))
	q.Add("a") // postponed: a worker holds it
	q.ShutDown()

	// Nothing is queued, but "a" will be at its Done: Get must wait for
	// it rather than report shutdown and leave it behind.
	got := make(chan string)
	go func() { key, _ := getWithin(q, time.Minute); got <- key }()
	_, err := getWithin(q, time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	q.Done("a")
	assert.Equal(t, "a", <-got)

	_, err = q.Get(context.Background())
	assert.ErrorIs(t, err, ErrShutDown)
}

func TestShutDownWakesEveryBlockedGet(t *testing.T) {
	q, _ := newFake(Options[string]{})
	errs := make(chan error)
	for range 3 {
		go func() {
			_, err := q.Get(context.Background())
			errs <- err
		}()
	}
	q.ShutDown()
	for range 3 {
		assert.ErrorIs(t, <-errs, ErrShutDown)
	}
}

func TestShutDownWithDrainWaitsForQueuedInFlightAndPostponedWork(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("held")
	require.Equal(t, "held", mustGet(t, q))
	q.Add("held") // postponed
	q.Add("queued")

	guard, cancel := context.WithTimeout(context.Background(), time.Minute) // against a hang
	defer cancel()
	drained := make(chan error)
	go func() { drained <- q.ShutDownWithDrain(guard) }()

	// The test is the worker. Until everything is Done, the drain waits.
	var order []string
	q.Done("held")
	for {
		key, err := q.Get(guard)
		if err != nil {
			require.ErrorIs(t, err, ErrShutDown)
			break
		}
		select {
		case <-drained:
			t.Fatal("the drain ended with work left")
		default:
		}
		order = append(order, key)
		q.Done(key)
	}
	assert.NoError(t, <-drained)
	assert.Equal(t, []string{"queued", "held"}, order)
}

func TestShutDownWithDrainGivesUpWhenItsContextEnds(t *testing.T) {
	q, _ := newFake(Options[string]{})
	q.Add("a")
	require.Equal(t, "a", mustGet(t, q)) // held, and never Done

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, q.ShutDownWithDrain(ctx), context.Canceled)
	assert.True(t, q.ShuttingDown(), "the queue is shut down even so")

	q.Done("a")
	assert.NoError(t, q.ShutDownWithDrain(ctx), "an already drained queue returns nil, whatever the context")
}

func TestShutDownDropsDelayedKeysAndStopsTheTimer(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.AddAfter("a", time.Second)
	q.AddAfter("b", 2*time.Second)
	require.Equal(t, 1, clock.Timers())

	q.ShutDown()
	assert.Equal(t, 0, clock.Timers())
	clock.Step(time.Hour)
	assert.Equal(t, 0, q.Len())
	_, err := q.Get(context.Background())
	assert.ErrorIs(t, err, ErrShutDown)
}
