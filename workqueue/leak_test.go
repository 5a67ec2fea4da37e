package workqueue

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// On the real clock: keys waiting for long delays, workers blocked in Get
// and a drain bounded by a context. Once Run has returned and the queue
// is shut down, not one goroutine of theirs is left, and no timer will
// fire later.
func TestShutDownAndRunLeaveNoGoroutineBehind(t *testing.T) {
	defer goleak.VerifyNone(t)

	q := New(Options[string]{})
	for n, key := range []string{"a", "b", "c"} {
		q.AddAfter(key, time.Duration(n+1)*time.Hour)
	}
	q.Add("now")
	q.AddRateLimited("retry")

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		Run(ctx, q, func(context.Context, string) (Result, error) { return Result{}, nil }, RunOptions[string]{Workers: 8})
	}()

	drainCtx, stop := context.WithTimeout(context.Background(), time.Minute) // a guard, not a timing
	defer stop()
	require.NoError(t, q.ShutDownWithDrain(drainCtx))
	cancel()
	<-ran
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Nil(t, q.timer, "no timer is armed")
}

// A queue in use and never shut down: keys queued, one held and added
// again, one retried, others waiting on the real clock. synctest.Test
// fails when its function returns while a goroutine of the bubble is
// still blocked, so the Queue has no goroutine of its own: the timer's
// function, which adds the due keys, runs on one that ends with it.
func TestAQueueRunsNoGoroutineOfItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.Add("a")
		q.Add("b")
		held, err := q.Get(t.Context())
		require.NoError(t, err)
		q.Add(held) // postponed until its Done, which never comes
		q.AddRateLimited("retry")
		q.AddAfter("sooner", time.Minute)
		q.AddAfter("later", time.Hour) // still waiting at the end

		time.Sleep(time.Minute)
		synctest.Wait() // until the timer's goroutine has added the due keys
		require.Equal(t, 3, q.Len(), "b, retry and sooner are queued")
	})
}
