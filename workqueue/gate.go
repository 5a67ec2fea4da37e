package workqueue

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A Gate can hold a key back before its reconcile starts, and only that
// key: the worker that got it lets it go and takes the next one, so a
// held key never pauses the controller. Package readyourwrites' Guard is
// one: it holds a key until the cache has seen the key's own last writes.
type Gate[K comparable] interface {
	// Hold reports whether key must wait. If it must, Run adds it again
	// once wake is closed or once within has passed, whichever is first,
	// and then asks again. A hold for no positive time is no hold: the
	// key is reconciled at once. Hold is called from
	// the workers, for one key at a time, never twice at once for the
	// same key; it must be quick.
	Hold(key K) (hold bool, wake <-chan struct{}, within time.Duration)
}

// KindHeld: under Run with a Gate, the gate held the key back before its
// reconcile; the worker let it go. Detail: "for up to 5s". It is added
// again (KindAdded "released") when the gate's wake channel closes or
// that time has passed.
const KindHeld = "held"

// holds are the keys a Gate is holding for one Run. A held key is added
// again once, when the first of its holds ends: the gate may hold it
// again before that (the key was added meanwhile, and a worker asked),
// with another wake channel or a shorter time, and each hold keeps its
// promise (TestAKeyHeldAgainWhileHeldIsReleasedWhenTheLaterHoldsWakeCloses,
// TestAKeyHeldAgainWhileHeldForAShorterTimeIsAskedAgainAtTheShorterTime).
// Or the gate lets it through before then: its holds are over, and a
// later hold is a new wait with its own time
// (TestAHoldAfterTheKeyWasLetThroughIsANewWaitWithItsOwnTime).
type holds[K comparable] struct {
	q     *Queue[K]
	gate  Gate[K]
	mu    sync.Mutex
	held  map[K]*held // guarded by mu
	wg    sync.WaitGroup
	ended chan struct{} // closed once Run's workers have returned
}

// held is one key's holds: ended is closed when the first of them ends.
// Guarded by holds.mu: wakes, the channels its waiters wait on, one
// goroutine each; due and timer, the soonest time any hold named, one
// timer moved earlier by a sooner hold. A hold again with a channel
// already waited on and no sooner time starts nothing, so a key held
// again on every change of its object costs a goroutine per new channel
// only (TestAKeyHeldAgainAndAgainOnOneWakeKeepsOneWaiter,
// TestAKeyHeldAgainOnOneWakeForLessAndLessTimeKeepsOneTimer).
type held struct {
	ended      chan struct{}
	once       sync.Once
	wakes      map[<-chan struct{}]bool
	due        time.Time
	timer      Timer
	letThrough bool // the gate let the key through before any hold ended: its end adds nothing
}

func (h *held) end() { h.once.Do(func() { close(h.ended) }) }

func newHolds[K comparable](q *Queue[K], gate Gate[K]) *holds[K] {
	return &holds[K]{q: q, gate: gate, held: map[K]*held{}, ended: make(chan struct{})}
}

// admit asks the gate about key, which a worker holds (Get, no Done yet).
// If the gate holds it, admit arranges for it to be added again and
// returns false: the worker calls Done without reconciling. A panic in
// the gate's Hold is returned as a *PanicError.
func (h *holds[K]) admit(ctx context.Context, key K) (bool, error) {
	if h == nil {
		return true, nil
	}
	hold, wake, within, err := h.ask(key)
	if err != nil {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k, again := h.held[key]
	if !hold || within <= 0 {
		if again { // let through: the earlier hold is over, and adds nothing
			delete(h.held, key)
			k.letThrough = true
			k.end()
		}
		return true, nil
	}
	if !again {
		k = &held{ended: make(chan struct{}), wakes: map[<-chan struct{}]bool{}}
		h.held[key] = k
		h.q.report(KindHeld, key, func() string { return fmt.Sprintf("for up to %v", within) })
		h.wg.Go(func() { // the key's end: its first hold's, or Run's
			select {
			case <-k.ended:
			case <-ctx.Done():
			case <-h.ended:
			}
			h.mu.Lock()
			if h.held[key] == k {
				delete(h.held, key)
			}
			k.timer.Stop()
			letThrough := k.letThrough
			h.mu.Unlock()
			if letThrough {
				return // reconciled since: nothing to add
			}
			// Added even when Run is ending, so whoever runs the queue
			// next reconciles it (dropped if the queue is shut down).
			h.q.mu.Lock()
			h.q.addLocked(key, "released")
			h.q.mu.Unlock()
		})
	}
	if wake != nil && !k.wakes[wake] {
		k.wakes[wake] = true
		h.wg.Go(func() {
			select {
			case <-wake:
				k.end()
			case <-k.ended: // another hold of key ended first
			case <-ctx.Done():
			case <-h.ended:
			}
		})
	}
	if deadline := h.q.clock.Now().Add(within); !again || deadline.Before(k.due) {
		if k.timer != nil {
			k.timer.Stop()
		}
		k.due, k.timer = deadline, h.q.clock.AfterFunc(within, k.end)
	}
	return false, nil
}

// ask is the gate's Hold, with a panic recovered as an error.
func (h *holds[K]) ask(key K) (hold bool, wake <-chan struct{}, within time.Duration, err error) {
	defer func() {
		if v := recover(); v != nil {
			p := NewPanicError(v)
			p.in = "the Gate's Hold"
			err = p
		}
	}()
	hold, wake, within = h.gate.Hold(key)
	return hold, wake, within, nil
}

// end stops every wait and returns once each held key is added again.
func (h *holds[K]) end() {
	if h == nil {
		return
	}
	close(h.ended)
	h.wg.Wait()
}
