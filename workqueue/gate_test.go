package workqueue

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/informer"
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

// admitSecondGate holds key "k" for an hour at every ask but the second,
// which it lets through; it records when each ask came.
type admitSecondGate struct {
	mu   sync.Mutex
	asks []time.Time
}

func (g *admitSecondGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asks = append(g.asks, time.Now())
	if len(g.asks) == 2 {
		return false, nil, 0
	}
	return true, nil, time.Hour
}

// Scenario: the gate holds k for 1h (at 0); k's object changes at 1m
// and the gate lets it through (reconciled); at 10m it changes again and
// the gate holds it for 1h more, a new wait. The first hold's record was
// never ended when the key was let through, so the new hold joins it: no
// KindHeld is traced for the new wait, and the old hold's timer brings
// the key back at 1h, 50 minutes before the hour the gate asked for.
//
// Promises broken: Gate.Hold "If it must, Run adds it again once wake is
// closed or once within has passed, whichever is first, and then asks
// again" (asked again at 1h for a hold of 1h made at 10m); KindHeld: "the
// gate held the key back before its reconcile", reported "once per wait"
// (the second wait is not reported).
func TestAHoldAfterTheKeyWasLetThroughIsANewWaitWithItsOwnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var held int
		q := New(Options[string]{Trace: func(e informer.TraceEvent) {
			if e.Kind == KindHeld {
				mu.Lock()
				held++
				mu.Unlock()
			}
		}})
		gate := &admitSecondGate{}
		start := time.Now()
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil },
			RunOptions[string]{Gate: gate})
		defer stop()
		q.Add("k")
		time.Sleep(time.Minute)
		q.Add("k") // let through, reconciled
		time.Sleep(9 * time.Minute)
		q.Add("k") // held again for 1h: until 1h10m
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 2, held, "two waits, each traced (KindHeld at 0 and at 10m)")
		mu.Unlock()
		time.Sleep(time.Hour + 5*time.Minute) // to 1h15m
		synctest.Wait()

		gate.mu.Lock()
		defer gate.mu.Unlock()
		if assert.GreaterOrEqual(t, len(gate.asks), 4) {
			assert.Equal(t, 70*time.Minute, gate.asks[3].Sub(start), "the hold made at 10m for 1h is asked again at 1h10m")
		}
	})
}

// ShutDownWithDrain finishes the keys queued and in flight, not those a
// Gate holds: a held key is let go (Done) and not queued meanwhile, so
// the drain does not wait for it, and it is dropped like a delayed key
// when its hold ends after the shutdown. workqueue's doc and Run's say
// so.
func TestShutDownWithDrainDropsAKeyAGateHoldsAsItDropsADelayedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var done lines
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			Run(ctx, q, func(_ context.Context, key string) (Result, error) {
				done.add(key)
				return Result{}, nil
			}, RunOptions[string]{Gate: &chanGate{wait: map[string]chan struct{}{"held": make(chan struct{})}, within: time.Hour}})
		}()
		q.Add("held")
		q.Add("free")
		assert.NoError(t, q.ShutDownWithDrain(context.Background()))
		<-returned // Run returns by itself once drained
		assert.Equal(t, []string{"free"}, done.get(), "the held key was queued when the drain began, and is never reconciled")
		assert.Zero(t, q.Len())
	})
}

// A held key's life in the trace: held, let go (done), and, once its
// time has passed, added with the Detail "released". KindAdded's comment
// once named only "delay over" and "added while processing".
func TestAHeldKeyIsTracedHeldThenAddedReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		q := New(Options[string]{Trace: rec.hook})
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil },
			RunOptions[string]{Gate: &holdOnce{within: 5 * time.Second}})
		q.Add("a")
		time.Sleep(time.Minute)
		stop()
		assert.Equal(t, []string{
			"workqueue  added  a",
			"workqueue  got  a",
			"workqueue  held  a  for up to 5s",
			"workqueue  done  a",
			"workqueue  added  a  released",
			"workqueue  got  a",
			"workqueue  done  a",
		}, rec.take())
	})
}
