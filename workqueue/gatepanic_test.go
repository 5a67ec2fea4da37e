package workqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// panicOnceGate panics on its first Hold, then lets every key pass.
type panicOnceGate struct {
	mu     sync.Mutex
	asked  int
	reason string
}

func (g *panicOnceGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	g.asked++
	first := g.asked == 1
	g.mu.Unlock()
	if first {
		panic(g.reason)
	}
	return false, nil, 0
}

// A Gate whose Hold panics neither crashes the process nor stops a
// worker: the panic is its key's failure, told to OnError as a
// *PanicError and retried with backoff like a reconcile's panic.
func TestAGateWhoseHoldPanicsFailsTheKeyAndItIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var failures []error
		var mu sync.Mutex
		var done lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			done.add(key)
			return Result{}, nil
		}, RunOptions[string]{Gate: &panicOnceGate{reason: "index out of range"}, OnError: func(_ string, err error) {
			mu.Lock()
			defer mu.Unlock()
			failures = append(failures, err)
		}})
		defer stop()

		q.Add("k")
		time.Sleep(time.Second) // past the first retry's backoff
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if assert.Len(t, failures, 1) {
			var p *PanicError
			assert.True(t, errors.As(failures[0], &p), "OnError got %v, not a *PanicError", failures[0])
			assert.Contains(t, failures[0].Error(), "the Gate's Hold panicked")
			assert.NotContains(t, failures[0].Error(), "reconcile", "the reconcile never ran")
		}
		assert.Equal(t, []string{"k"}, done.get(), "the key is reconciled on its retry")
	})
}

// A Gate whose Hold panics fails its key, as Run's doc says: the
// reconcile never ran, yet the panic is traced (KindPanicked) and counted
// in MetricsSnapshot.Failures, beside the retry it brings; the reconcile
// on that retry succeeds and adds no failure.
func TestAGateWhoseHoldPanicsIsCountedAsAFailureOfItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMetrics()
		q := New(Options[string]{Trace: m.Observe})
		var reconciles lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			reconciles.add(key)
			return Result{}, nil
		}, RunOptions[string]{Gate: &panicOnceGate{reason: "index out of range"}, OnError: func(string, error) {}})
		defer stop()

		q.Add("k")
		time.Sleep(time.Second) // past the first retry's backoff
		synctest.Wait()
		assert.Equal(t, []string{"k"}, reconciles.get(), "one reconcile, on the retry, which succeeded")
		s := m.Snapshot(time.Now())
		assert.Equal(t, 1, s.Failures, "the Hold's panic, a failure of its key")
		assert.Equal(t, 1, s.Retries)
	})
}
