package deltafifo

import (
	"context"
	"errors"
	"fmt"

	"github.com/listwatch/informer"
)

// A relist handed over in parts. Replace takes a whole list, so before it
// runs the list sits in memory beside the cache it replaces: for a moment
// every object exists twice, the old version in the cache and the new in
// the list, and the heap doubles (the seed's pitfall 7). Handed over as it
// is read, a part at a time, each part's Replaced deltas are popped into
// the cache while the next part is read, and each old version becomes
// garbage as its new one is applied. Only the set of keys listed so far
// grows with the list; the tombstones must wait for the end, because a
// key is known to be absent only once the whole list has been seen.
//
//	BeginReplace()                       start; forget an unfinished one
//	ReplacePart(objs) …                  Replaced deltas, queued at once
//	                                     (WaitForRoom first, to let the
//	                                     consumer catch up)
//	FinishReplace(rv)                    tombstones for keys no part listed;
//	                                     rv is applied once all is popped
//
// What a reader of the cache sees meanwhile: a key that is in both the
// old cache and the new list stays in the cache throughout (its new
// version replaces the old in one step), a key absent from the list stays
// until FinishReplace tombstones it, and a key new in the list appears
// when its part is popped. A list that fails half-way (a connection cut,
// an expired continue token) leaves the parts already queued: each is a
// state the server really had, newer than the cache's, and nothing is
// deleted on the word of a list that did not finish. The next
// BeginReplace starts the count of listed keys afresh; Empty, for a
// collection that is gone, deletes them.

// BeginReplace starts a replacement handed over in parts (see
// ReplacePart and FinishReplace). One that was begun and never finished
// is forgotten: what its parts queued stays queued, but no tombstone is
// derived from it. The caller (the reflector) must not write anything
// else between BeginReplace and FinishReplace but parts, resyncs and
// bookmarks: a watch event in the middle of a list would be judged
// against a list that does not know it.
func (f *DeltaFIFO[T]) BeginReplace() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.beginLocked()
	return nil
}

// ReplacePart queues a Replaced delta for every object of part, as
// Replace does for a whole list, and remembers their keys as listed. It is
// atomic per part: if an object is nil or has no valid key, nothing of
// this part is queued. It fails with no replacement begun. It never
// waits: a reader that should wait for the consumer calls WaitForRoom
// first. Cost: O(len(part)).
func (f *DeltaFIFO[T]) ReplacePart(part []T) error {
	keys, err := keysOf("ReplacePart", part)
	if err != nil {
		return err
	}
	return f.inReplacement("ReplacePart", func() { f.partLocked(part, keys) })
}

// WaitForRoom waits while the queue holds Options.PartQueueLimit keys or
// more, until the consumer has popped enough: a list read faster than it
// is popped can wait here instead of piling up beside the cache. It
// returns nil once there is room, ctx's error if ctx ends first, and
// ErrClosed if the DeltaFIFO is closed. Pop wakes it after each key it
// takes. The caller decides how long to wait (the reflector waits a
// bounded time per request, then queues regardless: see
// reflector.Tuning.HoldBack).
func (f *DeltaFIFO[T]) WaitForRoom(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if f.partLimit < 0 || len(f.queue) < f.partLimit {
		return nil
	}
	// As in Pop: a Cond cannot watch a context, so ctx's end broadcasts.
	stop := context.AfterFunc(ctx, f.wake)
	defer stop()
	f.waitingForRoom++
	defer func() { f.waitingForRoom-- }()
	for len(f.queue) >= f.partLimit {
		if f.closed {
			return ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f.cond.Wait()
	}
	return nil
}

// FinishReplace ends the replacement begun by BeginReplace: it queues a
// Deleted delta with FinalStateUnknown for every key known or queued that
// no part listed, as Replace does, and records resourceVersion, the
// list's, to be applied once everything queued before it is popped. The
// first FinishReplace marks the start of HasSynced's count, as the first
// Replace does. Cost: O(known + queued).
func (f *DeltaFIFO[T]) FinishReplace(resourceVersion string) error {
	return f.inReplacement("FinishReplace", func() { f.finishLocked(resourceVersion) })
}

// inReplacement runs step with mu held, if the DeltaFIFO is open and a
// replacement is begun; op names the caller in the error otherwise.
func (f *DeltaFIFO[T]) inReplacement(op string, step func()) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if !f.replacing {
		return fmt.Errorf("deltafifo: %s: %w", op, ErrNoReplacement)
	}
	step()
	return nil
}

// Empty deletes everything: it queues a Deleted delta with
// FinalStateUnknown, carrying the last known state, for every key known
// or queued, and forgets a replacement begun and not finished. It is for
// a collection that is gone, whose list will never finish (the reflector
// calls it when the resource is no longer served before a list has
// finished: the parts of a cut list are already queued, or in the cache).
//
// Unlike Replace with an empty list, it is not a list: it records no
// resourceVersion and does not count toward HasSynced, so a DeltaFIFO
// that has not synced stays unsynced. Cost: O(known + queued).
func (f *DeltaFIFO[T]) Empty() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.markLocked("")
	defer f.advanceLocked() // nothing queued or known: nothing to wait for
	f.replacing, f.listed, f.listedCount = false, nil, 0
	var known []informer.Key
	if f.known != nil {
		known = f.known.ListKeys()
	}
	for _, key := range f.vanishedLocked(map[informer.Key]bool{}, known) { // nothing listed: every key vanished
		last, ok := f.lastKnownLocked(key)
		if !ok {
			continue
		}
		if f.trace != nil {
			f.emit(KindTombstoned, key, last.GetResourceVersion(), "emptied: the collection is gone")
		}
		f.queueLocked(key, Delta[T]{Type: Deleted, Object: last, FinalStateUnknown: true})
	}
	return nil
}

// ErrNoReplacement is the error of a ReplacePart or FinishReplace with no
// BeginReplace before it.
var ErrNoReplacement = errors.New("no replacement begun (call BeginReplace first)")
