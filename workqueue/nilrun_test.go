package workqueue

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A nil queue or a nil ReconcileFunc is a mistake in the call, not a
// failure of some key: Run says so at once, on the caller's goroutine,
// before it starts a worker. Without that, a nil ReconcileFunc made every
// key "panic" and be retried with backoff forever, and a nil queue
// crashed the process from a worker's goroutine, where no caller can
// recover. The context is done here so that, without the check, Run
// returns at once instead of doing either.
func TestRunPanicsAtOnceNamingANilQueueOrANilReconcileFunc(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reconcile := func(context.Context, string) (Result, error) { return Result{}, nil }

	assert.PanicsWithValue(t, "workqueue: Run: the queue is nil", func() {
		Run(ctx, nil, reconcile, RunOptions[string]{})
	})
	q := New(Options[string]{})
	defer q.ShutDown()
	assert.PanicsWithValue(t, "workqueue: Run: the ReconcileFunc is nil", func() {
		Run(ctx, q, nil, RunOptions[string]{})
	})
}
