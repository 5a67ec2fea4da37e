package workqueue

// A key held again and again: each test states a promise of Gate's doc.

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// heldKey is the key "k" of a Run whose gate answers each ask with the
// next of its answers, then lets the key through.
type heldKey struct {
	q          *Queue[string]
	added      time.Time // when k was first added
	reconciled chan time.Time
}

// addHeldKey starts Run on a new queue with a seqGate of answers, and adds
// "k"; stop ends the Run.
func addHeldKey(answers ...gateAnswer) (k *heldKey, stop func()) {
	k = &heldKey{q: New(Options[string]{}), reconciled: make(chan time.Time, 1)}
	stop = startRun(k.q, func(context.Context, string) (Result, error) { k.reconciled <- time.Now(); return Result{}, nil },
		RunOptions[string]{Gate: &seqGate{answers: answers}})
	k.added = time.Now()
	k.q.Add("k")
	return k, stop
}

// reconciledAfter waits for k's reconcile and says how long after k was
// first added it began.
func (k *heldKey) reconciledAfter() time.Duration { return (<-k.reconciled).Sub(k.added) }

// Held on (A, 1h), then again on the same A for 1s: asked again at 1s.
func TestAKeyHeldAgainOnItsWakeForLessTimeIsAskedAgainSooner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := make(chan struct{})
		k, stop := addHeldKey(gateAnswer{a, time.Hour}, gateAnswer{a, time.Second})
		defer stop()
		synctest.Wait()
		k.q.Add("k")
		assert.Equal(t, time.Second, k.reconciledAfter())
	})
}

// Held first with a nil wake for 1h, then on B for 1h: closing B releases.
func TestAKeyHeldWithNoWakeThenOnAWakeIsReleasedWhenItCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := make(chan struct{})
		k, stop := addHeldKey(gateAnswer{nil, time.Hour}, gateAnswer{b, time.Hour})
		defer stop()
		synctest.Wait()
		k.q.Add("k")
		synctest.Wait()
		time.Sleep(time.Minute)
		close(b)
		assert.Equal(t, time.Minute, k.reconciledAfter())
	})
}

// Held on (A, 1s); at 1s it is asked again and held on the same A for 1h
// (a fresh hold): closing A then releases it at once.
func TestAKeyHeldAgainOnTheSameWakeAfterItsTimeIsReleasedWhenTheWakeCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := make(chan struct{})
		k, stop := addHeldKey(gateAnswer{a, time.Second}, gateAnswer{a, time.Hour})
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		close(a)
		assert.Equal(t, time.Minute, k.reconciledAfter())
	})
}

// Timers and waiters do not outlive Run, on a FakeClock.
func TestNoTimerOrWaiterOfAHoldOutlivesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := NewFakeClock(epoch)
		a, b := make(chan struct{}), make(chan struct{})
		gate := &seqGate{answers: []gateAnswer{{a, time.Hour}, {b, time.Minute}, {a, time.Second}}}
		q := New(Options[string]{Clock: clock})
		base := runtime.NumGoroutine()
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil }, RunOptions[string]{Gate: gate})
		for range 3 {
			q.Add("k")
			synctest.Wait()
		}
		stop()
		synctest.Wait()
		assert.Equal(t, 0, clock.Timers())
		assert.LessOrEqual(t, runtime.NumGoroutine(), base)
	})
}

// skewGate is readyourwrites.Guard with its own Clock running twice as
// fast as the queue's (Guard's Options.Clock is not the queue's): it holds
// on one wake for what is left of an hour by its clock.
type skewGate struct {
	mu    sync.Mutex
	wake  chan struct{}
	start time.Time
}

func (g *skewGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return true, g.wake, time.Hour - 2*time.Since(g.start)
}

// With the gate's clock twice as fast as the queue's, each hold's time
// is sooner than the last: the key's one timer is moved earlier, no
// waiter or timer is added. (Found by review: each such hold started
// both.)
func TestAKeyHeldAgainOnOneWakeForLessAndLessTimeKeepsOneTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &skewGate{wake: make(chan struct{}), start: time.Now()}
		q := New(Options[string]{})
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil }, RunOptions[string]{Gate: g})
		defer stop()
		q.Add("k")
		synctest.Wait()
		base := runtime.NumGoroutine()
		for range 1000 {
			time.Sleep(time.Millisecond)
			q.Add("k")
			synctest.Wait()
		}
		assert.LessOrEqual(t, runtime.NumGoroutine()-base, 2, "goroutines added by 1000 holds of one held key")
	})
}
