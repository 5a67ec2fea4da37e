package deltafifo

import (
	"fmt"

	"github.com/listwatch/informer"
)

// Add queues an Added delta for obj. It fails if obj is nil or has no
// valid key, or after Close. Cost: O(1) amortised.
func (f *DeltaFIFO[T]) Add(obj T) error { return f.write("Add", Added, obj) }

// Update queues an Updated delta for obj. Same rules and cost as Add.
func (f *DeltaFIFO[T]) Update(obj T) error { return f.write("Update", Updated, obj) }

// Delete queues a Deleted delta for obj whose final state is known: obj is
// the object as the watch reported its deletion.
//
// A delete for a key that is neither queued nor in KnownObjects is
// ignored: nobody downstream has heard of the object, so there is nothing
// to tell them. Two deletes in a row for one key collapse into one.
func (f *DeltaFIFO[T]) Delete(obj T) error {
	key, err := informer.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("deltafifo: Delete: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.markLocked(obj.GetResourceVersion())
	if _, queued := f.items[key]; !queued && !f.isKnown(key) {
		f.emit(KindIgnored, key, obj.GetResourceVersion(), "delete of a key nobody knows")
		f.advanceLocked() // nothing queued, but its resourceVersion counts
		return nil
	}
	f.queueLocked(key, Delta[T]{Type: Deleted, Object: obj})
	return nil
}

func (f *DeltaFIFO[T]) write(op string, t DeltaType, obj T) error {
	key, err := informer.KeyOf(obj)
	if err != nil {
		return fmt.Errorf("deltafifo: %s: %w", op, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	f.markLocked(obj.GetResourceVersion())
	f.queueLocked(key, Delta[T]{Type: t, Object: obj})
	return nil
}

// queueLocked appends d to key's deltas, collapsing a repeated delete, and
// queues key at the back if it was not queued. The caller holds mu.
func (f *DeltaFIFO[T]) queueLocked(key informer.Key, d Delta[T]) {
	d.Resyncs = f.resyncs.Load()
	q, wasQueued := f.items[key]
	var merged bool
	q.deltas, merged = append(q.deltas, d).coalesce()
	if !wasQueued {
		q.at = f.seq
		f.queue = append(f.queue, key)
		f.high = max(f.high, len(f.queue))
	}
	f.items[key] = q
	if f.trace != nil {
		if merged {
			f.emit(KindCoalesced, key, d.Object.GetResourceVersion(), "two deletes became one")
		} else {
			f.emit(KindQueued, key, d.Object.GetResourceVersion(), describe(d))
		}
	}
	f.cond.Broadcast()
}

// isKnown reports whether key is in KnownObjects. The caller holds mu.
func (f *DeltaFIFO[T]) isKnown(key informer.Key) bool {
	if f.known == nil {
		return false
	}
	_, ok := f.known.Get(key)
	return ok
}
