package deltafifo

import (
	"strconv"

	"github.com/listwatch/informer"
)

// How far the consumer is in sync: every write (and bookmark) takes the
// next sequence number and is remembered with the resourceVersion it
// brought, and each key in the queue remembers the number of the write
// that queued it. Keys leave the queue in that order, so every write
// numbered below the first queued key's has been popped and processed in
// full: its resourceVersion is applied. This is what lets the informer
// report what its cache holds, not what the reflector last received.

// rvMark is one write's place in the order of writes and the
// resourceVersion it brought ("" for a Resync, which brings none). list
// marks the end of a list: its resourceVersion is applied even when older
// than the one before (etcd restored from a backup, a server behind),
// since the cache then holds that list's state and nothing newer.
type rvMark struct {
	seq  uint64
	rv   string
	list bool
}

// markLocked records the start of a write that brings rv; queueLocked
// gives the keys it queues the write's number. The caller holds mu.
func (f *DeltaFIFO[T]) markLocked(rv string) {
	f.seq++
	f.marks = append(f.marks, rvMark{seq: f.seq, rv: rv})
}

// markListLocked records the end of a list at rv (see rvMark). The
// caller holds mu.
func (f *DeltaFIFO[T]) markListLocked(rv string) {
	f.markLocked(rv)
	f.marks[len(f.marks)-1].list = true
}

// advanceLocked moves the applied resourceVersion past every write that
// no queued key is waiting on, and forgets those writes. The caller holds
// mu. Cost: O(1) amortised per write.
func (f *DeltaFIFO[T]) advanceLocked() {
	advanced := false
	for f.marksHead < len(f.marks) {
		m := f.marks[f.marksHead]
		if len(f.queue) > 0 && m.seq >= f.items[f.queue[0]].at {
			break
		}
		if m.rv != "" && (m.list || !olderRV(m.rv, f.AppliedResourceVersion())) {
			f.applied.Store(&m.rv)
		}
		f.marksHead++
		advanced = true
	}
	if f.marksHead > 64 && f.marksHead*2 > len(f.marks) { // drop the forgotten half
		f.marks = append(f.marks[:0], f.marks[f.marksHead:]...)
		f.marksHead = 0
	}
	if advanced {
		f.announceProgress()
	}
}

// Progress returns a channel that is closed the next time a write or
// bookmark is applied (see AppliedResourceVersion): when the consumer has
// processed more. It is how a reader waits for the cache to catch up
// without polling. Take the channel first, then check what you wait for,
// then wait on the channel: a change between the check and the wait
// still closes it. Safe to call from any goroutine; it takes no lock.
func (f *DeltaFIFO[T]) Progress() <-chan struct{} {
	for {
		if ch := f.progress.Load(); ch != nil {
			return *ch
		}
		ch := make(chan struct{})
		if f.progress.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// announceProgress wakes everyone waiting on Progress. The applied
// resourceVersion is already stored, so a woken reader sees it.
func (f *DeltaFIFO[T]) announceProgress() {
	if f.progress.Load() == nil {
		return // nobody waits: a read, not a write, on every pop
	}
	if ch := f.progress.Swap(nil); ch != nil {
		close(*ch)
	}
}

// Bookmark records that the source has reached resourceVersion rv with
// nothing to queue (a watch BOOKMARK event). It counts as applied once
// everything queued before it has been processed. It fails only after
// Close.
func (f *DeltaFIFO[T]) Bookmark(rv string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.markLocked(rv)
	f.advanceLocked()
	if f.trace != nil {
		f.emit(KindBookmarked, informer.Key{}, rv, "")
	}
	return nil
}

// AppliedResourceVersion is the resourceVersion the consumer is in sync
// with: that of the newest write or bookmark all of whose deltas, and all
// deltas queued before them, Pop has handed to the process function and
// seen return. "" until then. Safe to call from any goroutine, even
// from the process function: it takes no lock.
func (f *DeltaFIFO[T]) AppliedResourceVersion() string {
	if rv := f.applied.Load(); rv != nil {
		return *rv
	}
	return ""
}

// olderRV reports whether rv is older than than, when both are integers
// (as etcd's are). A delete the consumer must still see can carry an older
// resourceVersion than the event that caused it (the last known object);
// the applied resourceVersion must not move back for it (a list's may:
// see rvMark). Opaque resourceVersions are never compared.
func olderRV(rv, than string) bool {
	a, errA := strconv.ParseUint(rv, 10, 64)
	b, errB := strconv.ParseUint(than, 10, 64)
	return errA == nil && errB == nil && a < b
}
