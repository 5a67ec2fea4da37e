package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/listwatch/informer"
)

// ErrRequeue, wrapped in the error a process function returns, asks Pop to
// put the key's deltas back at the front of the queue, unchanged, so the
// next Pop hands them out again. Any other error drops them.
var ErrRequeue = errors.New("deltafifo: requeue")

// ProcessFunc handles every delta queued for one key, oldest first.
// isInInitialList is true for the keys the first Replace queued (or the
// parts of the first list handed over in parts), so a consumer can tell
// the initial list from later changes.
//
// It runs while the DeltaFIFO is locked (see Pop), so it must be quick and
// must not call the DeltaFIFO.
type ProcessFunc[T informer.Object] func(key informer.Key, deltas Deltas[T], isInInitialList bool) error

// Pop waits until a key is queued, removes it with all its deltas, and
// calls process with them. It returns process's error, wrapped with the
// key; ctx's error if ctx ends first; or ErrClosed once the DeltaFIFO is
// closed and empty.
//
// process runs with the DeltaFIFO locked. That is deliberate: the consumer
// applies the deltas to its cache (KnownObjects) inside process, and until
// it has, the key is in neither the queue nor the cache. If Replace could
// run in that gap it would find the key nowhere, and a deletion the relist
// revealed would never be tombstoned. Producers wait while process runs.
//
// If process returns an error wrapping ErrRequeue, the deltas go back to
// the front of the queue as they were and the key counts as unpopped for
// HasSynced; the caller should back off before popping again. Any other
// error drops the deltas: retrying a delta the cache rejected (a malformed
// object) would fail the same way forever.
//
// Waiting is the sync.Cond loop: `for len(queue) == 0 { cond.Wait() }`. A
// Cond cannot watch a context, so context.AfterFunc broadcasts on the Cond
// when ctx ends, and the loop re-checks ctx.
//
// Cost: O(1) when a key is queued, plus process.
func (f *DeltaFIFO[T]) Pop(ctx context.Context, process ProcessFunc[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 && ctx.Done() != nil {
		// About to wait: make ctx's end wake us. (stop does not wait for
		// a callback already running, so calling it with mu held is safe.)
		stop := context.AfterFunc(ctx, f.wake)
		defer stop()
	}
	for len(f.queue) == 0 {
		if f.closed {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f.cond.Wait()
	}

	key := f.queue[0]
	f.queue[0] = informer.Key{}
	f.queue = f.queue[1:]
	q := f.items[key]
	delete(f.items, key)
	deltas := q.deltas
	// counted: one of the keys queued when the first list finished.
	// While the first list is still arriving in parts, every key popped
	// belongs to it too.
	counted := f.initialRemaining > 0
	if counted {
		f.initialRemaining--
	}
	initial := counted || (f.replacing && !f.replaced)
	if f.trace != nil {
		detail := strconv.Itoa(len(deltas)) + " deltas, newest " + describe(deltas.Newest())
		if initial {
			detail += ", initial list"
		}
		f.emit(KindPopped, key, deltas.Newest().Object.GetResourceVersion(), detail)
	}

	err := process(key, deltas, initial)
	if err == nil || !errors.Is(err, ErrRequeue) {
		f.advanceLocked() // processed, or dropped: either way no longer pending
		f.noteSyncedLocked()
		f.shrinkIfDrainedLocked()
		if f.waitingForRoom > 0 {
			f.cond.Broadcast() // a WaitForRoom waits for the queue to shrink
		}
	}
	if f.trace != nil {
		detail := ""
		if err != nil {
			detail = err.Error()
		}
		f.emit(KindProcessed, key, f.AppliedResourceVersion(), detail)
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrRequeue) {
		// No writer ran while we held mu, so key is not queued again: put it
		// back where it was. O(queue length), and only on this path.
		f.items[key] = q
		f.queue = append([]informer.Key{key}, f.queue...)
		if counted {
			f.initialRemaining++
		}
		if f.trace != nil {
			f.emit(KindRequeued, key, deltas.Newest().Object.GetResourceVersion(), err.Error())
		}
	}
	return fmt.Errorf("deltafifo: processing %s: %w", key, err)
}

// wake wakes every waiting Pop so that each re-checks its context.
func (f *DeltaFIFO[T]) wake() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cond.Broadcast()
}

// shrinkAbove is the queue length above which a drained queue's map is
// made anew: below it, what they keep is not worth the reallocation.
const shrinkAbove = 1024

// shrinkIfDrainedLocked makes items and queue anew once the
// queue is empty after having held more than shrinkAbove keys, so the
// memory a burst needed is given back (see high). The caller holds mu.
func (f *DeltaFIFO[T]) shrinkIfDrainedLocked() {
	if len(f.queue) > 0 || f.high <= shrinkAbove {
		return
	}
	f.items = map[informer.Key]queued[T]{}
	f.queue = nil
	f.high = 0
}
