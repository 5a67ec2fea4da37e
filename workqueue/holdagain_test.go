package workqueue

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// seqGate answers each Hold of a key with the next of a list of answers;
// past the list, it lets the key pass.
type seqGate struct {
	mu      sync.Mutex
	answers []gateAnswer
}

type gateAnswer struct {
	wake   <-chan struct{}
	within time.Duration
}

func (g *seqGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.answers) == 0 {
		return false, nil, 0
	}
	a := g.answers[0]
	g.answers = g.answers[1:]
	return true, a.wake, a.within
}

// Gate's contract: "If it must, Run adds it again once wake is closed or
// once within has passed, whichever is first, and then asks again." A key
// held once (wake A, 1h) is added again by a handler and the gate holds it
// again on a new wake B: closing B brings the key back. (Found by a bug
// hunt: Run kept only the first hold, so the key waited for A or the full
// hour.)
func TestAKeyHeldAgainWhileHeldIsReleasedWhenTheLaterHoldsWakeCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := make(chan struct{}), make(chan struct{})
		gate := &seqGate{answers: []gateAnswer{{a, time.Hour}, {b, time.Hour}}}
		q := New(Options[string]{})
		var done lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			done.add(key)
			return Result{}, nil
		}, RunOptions[string]{Gate: gate})
		defer stop()

		q.Add("k")
		synctest.Wait() // held on a
		q.Add("k")      // the informer's handler: the object changed
		synctest.Wait() // asked again: held on b
		gate.mu.Lock()
		asked := len(gate.answers) == 0
		gate.mu.Unlock()
		assert.True(t, asked, "the gate was asked a second time")
		close(b)
		synctest.Wait()
		assert.Equal(t, []string{"k"}, done.get(), "the second hold's wake closed, yet the key was not asked again")
	})
}

// ... or within: the second hold names 1s, the first 1h.
func TestAKeyHeldAgainWhileHeldForAShorterTimeIsAskedAgainAtTheShorterTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, stop := addHeldKey(gateAnswer{nil, time.Hour}, gateAnswer{nil, time.Second})
		defer stop()
		synctest.Wait()
		k.q.Add("k")
		assert.Equal(t, time.Second, k.reconciledAfter(), "asked again after the second hold's 1s")
	})
}

// sameWakeGate holds every key on one wake channel that never closes,
// for up to within each time: what readyourwrites.Guard answers for a key
// whose write the cache has not seen (same wake, what is left of MaxHold).
type sameWakeGate struct {
	wake   chan struct{}
	within time.Duration
}

func (g *sameWakeGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	return true, g.wake, g.within
}

// A held key that keeps changing (an informer delivering updates while
// the guard waits for the cache) is got and held again on every change.
// A hold with a wake already waited on and no earlier time starts no
// goroutine and no timer. (Found by review: each hold started both,
// 1000 of each for one key's 1000 changes.)
func TestAKeyHeldAgainAndAgainOnOneWakeKeepsOneWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := NewFakeClock(epoch)
		q := New(Options[string]{Clock: clock})
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, nil },
			RunOptions[string]{Gate: &sameWakeGate{wake: make(chan struct{}), within: time.Hour}})
		defer stop()
		q.Add("k")
		synctest.Wait()
		base, timers := runtime.NumGoroutine(), clock.Timers()
		for range 1000 {
			q.Add("k") // the object changed again
			synctest.Wait()
		}
		assert.LessOrEqual(t, runtime.NumGoroutine()-base, 2, "goroutines added by 1000 holds of one held key")
		assert.LessOrEqual(t, clock.Timers()-timers, 2, "timers added by 1000 holds of one held key")
	})
}
