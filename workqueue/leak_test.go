package workqueue

import (
	"context"
	"testing"
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
