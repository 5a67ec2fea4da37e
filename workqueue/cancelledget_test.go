package workqueue

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// A key added at the moment Run's ctx ends (a held key released by the
// cancel, an informer's event) wakes a worker blocked in Get, which finds
// the key ready and ctx done at once. Run must not start a reconcile
// under a context already done: under leader election that ctx is the
// term, and a reconcile started after the term ended writes as a leader
// that is not. The key stays queued for whoever runs q next.
func TestRunStartsNoReconcileOnceItsContextIsDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		ctx, cancel := context.WithCancel(t.Context())
		var late atomic.Int32
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, q, func(ctx context.Context, _ string) (Result, error) {
				if ctx.Err() != nil {
					late.Add(1)
				}
				return Result{}, nil
			}, RunOptions[string]{})
		}()
		synctest.Wait() // the worker waits in Get

		// The key is queued and ctx ended under one hold of q.mu, so the
		// worker, whichever wakes it, finds both at once.
		q.mu.Lock()
		cancel()
		q.addLocked("a", "added")
		q.mu.Unlock()
		<-done

		assert.Zero(t, late.Load(), "reconciles started with ctx done")
		assert.Equal(t, 1, q.Len(), "the key is left queued for the next Run")
	})
}
