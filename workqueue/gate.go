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

// holds are the keys a Gate is holding for one Run: at most one waiting
// goroutine per key, each ended by its wake, its time, or the end of Run.
type holds[K comparable] struct {
	q     *Queue[K]
	gate  Gate[K]
	mu    sync.Mutex
	held  map[K]bool
	wg    sync.WaitGroup
	ended chan struct{} // closed once Run's workers have returned
}

func newHolds[K comparable](q *Queue[K], gate Gate[K]) *holds[K] {
	return &holds[K]{q: q, gate: gate, held: map[K]bool{}, ended: make(chan struct{})}
}

// admit asks the gate about key, which a worker holds (Get, no Done yet).
// If the gate holds it, admit arranges for it to be added again and
// returns false: the worker calls Done without reconciling.
func (h *holds[K]) admit(ctx context.Context, key K) bool {
	if h == nil {
		return true
	}
	hold, wake, within := h.gate.Hold(key)
	if !hold || within <= 0 {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[key] {
		return false // already waiting to be added again: reported then
	}
	h.held[key] = true
	h.q.report(KindHeld, key, fmt.Sprintf("for up to %v", within))
	h.wg.Go(func() {
		due := make(chan struct{})
		timer := h.q.clock.AfterFunc(within, func() { close(due) })
		defer timer.Stop()
		select {
		case <-wake:
		case <-due:
		case <-ctx.Done():
		case <-h.ended:
		}
		h.mu.Lock()
		delete(h.held, key)
		h.mu.Unlock()
		// Added even when Run is ending, so whoever runs the queue next
		// reconciles it (dropped if the queue is shut down).
		h.q.mu.Lock()
		h.q.addLocked(key, "released")
		h.q.mu.Unlock()
	})
	return false
}

// end stops every wait and returns once each held key is added again.
func (h *holds[K]) end() {
	if h == nil {
		return
	}
	close(h.ended)
	h.wg.Wait()
}
