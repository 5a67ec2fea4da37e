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
func (f *DeltaFIFO[T]) Replace(list []T, resourceVersion string) error {
	keys := make([]informer.Key, len(list))
	for n, obj := range list {
		key, err := informer.KeyOf(obj)
		if err != nil {
			return fmt.Errorf("deltafifo: Replace: item %d: %w", n, err)
		}
		keys[n] = key
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.markLocked(resourceVersion)
	defer f.advanceLocked() // an empty list over an empty cache queues nothing
	// Only keys queued or known before this list can vanish: with none
	// (the initial list, usually), the set of listed keys is not needed.
	var known []informer.Key
	if f.known != nil {
		known = f.known.ListKeys()
	}
	var listed map[informer.Key]bool
	if len(f.queue) > 0 || len(known) > 0 {
		listed = make(map[informer.Key]bool, len(list))
		for _, key := range keys {
			listed[key] = true
		}
	}
	if len(f.queue) == 0 && len(list) > shrinkAbove {
		// The queue's map is about to grow to the list's size: make it
		// that size now, rather than rehash them at every doubling.
		f.items = make(map[informer.Key]queued[T], len(list))
		f.queue = make([]informer.Key, 0, len(list))
	}
	for n, obj := range list {
		f.queueLocked(keys[n], Delta[T]{Type: Replaced, Object: obj})
	}
	tombstones := 0
	for _, key := range f.vanishedLocked(listed, known) {
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
		f.initialRemaining = len(f.queue) // everything queued now is the initial list
		f.noteSyncedLocked()              // an empty first list has nothing to wait for
	}
	if f.trace != nil {
		f.emit(KindReplaced, informer.Key{}, resourceVersion,
			fmt.Sprintf("%d listed, %d tombstones, %d keys queued", len(list), tombstones, len(f.queue)))
	}
	return nil
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
// skipped: it is about to be processed anyway, with newer state.
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
