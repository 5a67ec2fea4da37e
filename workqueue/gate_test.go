package workqueue

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// chanGate holds each key in closed-over channels until its channel is
// closed; keys without a channel pass.
type chanGate struct {
	wait   map[string]chan struct{}
	within time.Duration
}

func (g *chanGate) Hold(key string) (bool, <-chan struct{}, time.Duration) {
	ch, ok := g.wait[key]
	if !ok {
		return false, nil, 0
	}
	select {
	case <-ch:
		return false, nil, 0
	default:
		return true, ch, g.within
	}
}

// One worker, a held key first in line: the worker lets it go and
// reconciles the next key; the held key is reconciled once its gate
// opens, without any other Add.
func TestAHeldKeyDoesNotPauseTheOtherKeysAndRunsOnceReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		open := make(chan struct{})
		q := New(Options[string]{})
		var done lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			done.add(key)
			return Result{}, nil
		}, RunOptions[string]{Workers: 1, Gate: &chanGate{wait: map[string]chan struct{}{"held": open}, within: time.Hour}})
		defer stop()

		q.Add("held")
		q.Add("free")
		synctest.Wait()
		assert.Equal(t, []string{"free"}, done.get(), "the held key waits, the other goes on")

		close(open)
		synctest.Wait()
		assert.Equal(t, []string{"free", "held"}, done.get(), "released when the gate opened")
	})
}

// holdOnce holds a key the first time it is asked, on a wake channel
// that never closes, and lets it pass after that.
type holdOnce struct {
	mu     sync.Mutex
	asked  int
	within time.Duration
}

func (g *holdOnce) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked++
	return g.asked == 1, make(chan struct{}), g.within
}

// A gate that never wakes a key holds it only for the time it named.
func TestAHeldKeyIsAskedAgainOnceItsTimeHasPassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		reconciled := make(chan time.Time, 1)
		stop := startRun(q, func(context.Context, string) (Result, error) {
			reconciled <- time.Now()
			return Result{}, nil
		}, RunOptions[string]{Gate: &holdOnce{within: 5 * time.Second}})
		defer stop()

		start := time.Now()
		q.Add("held")
		assert.Equal(t, 5*time.Second, (<-reconciled).Sub(start), "asked again after within, not before")
	})
}

// Stopping Run ends every hold: the held key is in the queue again for
// whoever runs it next, and no goroutine is left behind (synctest fails a
// bubble that leaks one).
func TestStoppingRunPutsHeldKeysBackInTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil },
			RunOptions[string]{Gate: &chanGate{wait: map[string]chan struct{}{"held": make(chan struct{})}, within: time.Hour}})
		q.Add("held")
		synctest.Wait()
		assert.Zero(t, q.Len(), "held, not queued")
		stop()
		assert.Equal(t, 1, q.Len(), "back in the queue")
	})
}
