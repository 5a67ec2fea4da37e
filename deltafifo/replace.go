package deltafifo

import (
	"fmt"

	"github.com/listwatch/informer"
)

// Replace queues the result of a full LIST: a Replaced delta for every
// object in list, then a Deleted delta with FinalStateUnknown for every
// key that is known (in KnownObjects) or still queued but absent from
// list. That second step is how a relist reveals deletions whose watch
// events were lost; the delta carries the last state this side knew.
//
// Keys still queued must be checked as well as known ones: an object
// added and deleted while the watch was down may have been queued but not
// yet popped into the cache. (client-go once missed these,
// kubernetes#115658.)
//
// Replaced, not Sync, marks listed objects: a relist may carry real
// changes, while Sync means "nothing changed, replay". The consumer tells
// an add from an update by looking in its cache.
//
// It is atomic: if any object is nil or has no valid key, nothing is
// queued. The first Replace marks the start of HasSynced's count.
// resourceVersion is the list's, reported in the trace.
// Cost: O(len(list) + known + queued).
//
// Replace is BeginReplace, one ReplacePart and FinishReplace under one
// lock; a list read in parts can be handed over in parts instead (see
// replaceparts.go), so that it never sits in memory whole.
func (f *DeltaFIFO[T]) Replace(list []T, resourceVersion string) error {
	keys, err := keysOf("Replace", list)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.beginLocked()
	if len(f.queue) == 0 && len(list) > shrinkAbove {
		// The queue's map is about to grow to the list's size: make it
		// that size now, rather than rehash them at every doubling.
		f.items = make(map[informer.Key]queued[T], len(list))
		f.queue = make([]informer.Key, 0, len(list))
	}
	f.partLocked(list, keys)
	f.finishLocked(resourceVersion)
	return nil
}

// keysOf returns the key of every object of list, or an error naming the
// first that has none; op names the caller in it.
func keysOf[T informer.Object](op string, list []T) ([]informer.Key, error) {
	keys := make([]informer.Key, len(list))
	for n, obj := range list {
		key, err := informer.KeyOf(obj)
		if err != nil {
			return nil, fmt.Errorf("deltafifo: %s: item %d: %w", op, n, err)
		}
		keys[n] = key
	}
	return keys, nil
}

// beginLocked starts a replacement, dropping one that never finished.
// Only keys queued or known before the list can vanish: with none (the
// initial list, usually), the set of listed keys is not kept. The caller
// holds mu.
func (f *DeltaFIFO[T]) beginLocked() {
	f.replacing = true
	f.listedCount = 0
	f.listed = nil
	if len(f.queue) > 0 || (f.known != nil && f.known.Len() > 0) {
		f.listed = map[informer.Key]bool{}
	}
}

// partLocked queues a Replaced delta for each object of part, whose keys
// are keys, and remembers them as listed. The caller holds mu.
func (f *DeltaFIFO[T]) partLocked(part []T, keys []informer.Key) {
	f.markLocked("") // the list's resourceVersion counts only once it is all in
	for n, obj := range part {
		f.queueLocked(keys[n], Delta[T]{Type: Replaced, Object: obj})
		if f.listed != nil {
			f.listed[keys[n]] = true
		}
	}
	f.listedCount += len(part)
	f.advanceLocked() // an empty part queues nothing
}

// finishLocked ends a replacement: a tombstone for every key queued or
// known but not listed, and the list's resourceVersion, applied once
// everything queued so far is. The caller holds mu.
func (f *DeltaFIFO[T]) finishLocked(resourceVersion string) {
	f.markListLocked(resourceVersion)
	defer f.advanceLocked() // an empty list over an empty cache queues nothing
	var known []informer.Key
	if f.listed != nil && f.known != nil {
		known = f.known.ListKeys()
	}
	tombstones := 0
	for _, key := range f.vanishedLocked(f.listed, known) {
		last, ok := f.lastKnownLocked(key)
		if !ok {
			continue
		}
		if f.trace != nil {
			f.emit(KindTombstoned, key, last.GetResourceVersion(), "absent from the list at rv "+resourceVersion)
		}
		f.queueLocked(key, Delta[T]{Type: Deleted, Object: last, FinalStateUnknown: true})
		tombstones++
	}
	if !f.replaced {
		f.replaced = true
		f.initialRemaining = len(f.queue) // everything still queued is the initial list
		f.noteSyncedLocked()              // an empty first list has nothing to wait for
	}
	if f.trace != nil {
		f.emit(KindReplaced, informer.Key{}, resourceVersion,
			fmt.Sprintf("%d listed, %d tombstones, %d keys queued", f.listedCount, tombstones, len(f.queue)))
	}
	f.replacing, f.listed, f.listedCount = false, nil, 0
}

// vanishedLocked returns the keys that are queued or known (known: the
// KnownObjects' keys before the list) but not listed, each once, queued
// ones first in queue order. A nil listed means nothing was queued or
// known before the list, so nothing vanished. The caller holds mu.
func (f *DeltaFIFO[T]) vanishedLocked(listed map[informer.Key]bool, known []informer.Key) []informer.Key {
	if listed == nil {
		return nil // nothing was queued or known before the list
	}
	var gone []informer.Key
	seen := map[informer.Key]bool{}
	for _, key := range f.queue {
		if !listed[key] {
			gone = append(gone, key)
			seen[key] = true
		}
	}
	for _, key := range known {
		if !listed[key] && !seen[key] {
			gone = append(gone, key)
		}
	}
	return gone
}

// lastKnownLocked returns the newest state of key this side has: its
// newest queued delta if any (that is newer than the cache), else the
// cache's copy. The caller holds mu.
func (f *DeltaFIFO[T]) lastKnownLocked(key informer.Key) (T, bool) {
	if q, ok := f.items[key]; ok {
		return q.deltas.Newest().Object, true
	}
	if f.known == nil {
		var zero T
		return zero, false
	}
	return f.known.Get(key)
}

// Resync queues a Sync delta for every key in KnownObjects that has no
// delta queued, carrying the cached object. A key with queued deltas is
// skipped: it is about to be processed anyway, with newer state. Each
// call is numbered (Resyncs), and every delta carries the number of the
// latest (Delta.Resyncs), so a consumer can tell which resyncs skipped a
// key: those numbered above its oldest delta's, up to Resyncs when it
// is popped.
//
// This is what a resync is: the cache replayed to the consumer. It reads
// only KnownObjects and makes no API call. Without KnownObjects it does
// nothing. Cost: O(known).
func (f *DeltaFIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.resyncs.Add(1)
	if f.known == nil {
		return nil
	}
	f.markLocked("")
	defer f.advanceLocked()
	synced := 0
	for _, key := range f.known.ListKeys() {
		if _, queued := f.items[key]; queued {
			continue
		}
		obj, ok := f.known.Get(key)
		if !ok {
			continue // deleted from the cache since ListKeys
		}
		f.queueLocked(key, Delta[T]{Type: Sync, Object: obj})
		synced++
	}
	if f.trace != nil {
		f.emit(KindResync, informer.Key{}, "", fmt.Sprintf("%d keys replayed from the cache", synced))
	}
	return nil
}

// Resyncs returns how many times Resync has begun. It takes no lock, so
// the process function may call it: while Pop holds mu no Resync can
// begin, so the number stays put until process returns.
func (f *DeltaFIFO[T]) Resyncs() uint64 { return f.resyncs.Load() }
