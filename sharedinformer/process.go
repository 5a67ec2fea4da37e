package sharedinformer

import (
	"errors"
	"maps"
	"slices"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// process is the DeltaFIFO's ProcessFunc: it applies one key's deltas to
// the cache, oldest first, and after each one tells every handler.
//
// The order is the point: the cache is updated first, so a handler (or a
// worker it wakes) that reads through the lister already sees at least
// the change it is being told about.
//
// It holds mu throughout, so that a handler registering meanwhile gets a
// replay either entirely before or entirely after this key's changes.
func (i *Informer[T]) process(key informer.Key, deltas deltafifo.Deltas[T], initial bool) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	first := firstAnswered(deltas)
	owed := i.owedBy(first)
	var errs []error
	for _, d := range deltas {
		// A change the cache refuses (an IndexFunc's error) is dropped
		// alone: the key's later changes are others the server made, and
		// a delete among them still deletes
		// (TestADeleteQueuedBehindAnUpdateTheIndexRejectsStillDeletesTheObject).
		if err := i.apply(key, d, initial, &owed); err != nil {
			errs = append(errs, err)
		}
	}
	if len(owed) > 0 {
		// The index refused every change: no handler heard of the key,
		// and the resyncs it answers still owe a reminder of what the
		// cache holds.
		if obj, cached := i.indexer.Get(key); cached {
			i.remind(obj, owed)
		}
	}
	i.forgetAnswered(first)
	return errors.Join(errs...)
}

// firstAnswered returns the number of the first resync a popped key's
// deltas answer. A Sync answers the resync that queued it; every resync
// after its oldest delta skipped the key, which was queued, so the pop
// answers those too (deltafifo.Delta.Resyncs).
func firstAnswered[T informer.Object](deltas deltafifo.Deltas[T]) uint64 {
	oldest := deltas.Oldest()
	if oldest.Type == deltafifo.Sync {
		return oldest.Resyncs
	}
	return oldest.Resyncs + 1
}

// owedBy returns the handlers found due at the resyncs from first up to
// the DeltaFIFO's latest: those a popped key's reminder is owed to. The
// caller holds mu.
func (i *Informer[T]) owedBy(first uint64) map[*listener[T]]bool {
	if len(i.dueAt) == 0 {
		return nil
	}
	last := i.fifo.Resyncs()
	var owed map[*listener[T]]bool
	for n, due := range i.dueAt {
		if n < first || n > last {
			continue
		}
		if owed == nil {
			owed = map[*listener[T]]bool{}
		}
		for _, l := range due {
			owed[l] = true
		}
	}
	return owed
}

// maxDue bounds dueAt. Pops drop its entries (forgetAnswered), but while
// nothing pops (an empty cache whose resyncs replay nothing, a pop loop
// stuck in a slow index function) each resync with a handler due adds
// one; past maxDue the oldest goes, and a key still queued from that
// resync (a pop loop more than maxDue resyncs behind) reminds no handler
// for it.
const maxDue = 64

// recordDue records the handlers due at resync n (see dueAt). The caller
// holds mu.
func (i *Informer[T]) recordDue(n uint64, due []*listener[T]) {
	if i.dueAt == nil {
		i.dueAt = map[uint64][]*listener[T]{}
	}
	i.dueAt[n] = due
	for len(i.dueAt) > maxDue {
		delete(i.dueAt, slices.Min(slices.Collect(maps.Keys(i.dueAt))))
	}
}

// forgetAnswered drops the handlers recorded for resyncs before first.
// Keys are queued in order of arrival and a delta's resync number only
// grows, so every key still queued, or queued later, answers resyncs
// from first on. The caller holds mu.
func (i *Informer[T]) forgetAnswered(first uint64) {
	for n := range i.dueAt {
		if n < first {
			delete(i.dueAt, n)
		}
	}
}

// apply applies one delta to the cache and tells the handlers. A
// reminder (a Sync, or a relisted object that did not change) goes only
// to the handlers in *owed, once: *owed is then cleared. So is it once a
// change has been told to every handler: each has heard of the object
// since the resyncs it was owed for (a key first queued before it was
// cached was never replayed, and owes no reminder).
func (i *Informer[T]) apply(key informer.Key, d deltafifo.Delta[T], initial bool, owed *map[*listener[T]]bool) error {
	tell := func(n notification[T]) {
		i.distribute(n)
		*owed = nil
	}
	if d.Type == deltafifo.Deleted {
		if _, exists := i.indexer.Get(key); !exists {
			// Its add was refused earlier in this batch: no handler
			// heard of it, so none hears of its delete, as the
			// DeltaFIFO ignores the delete of a key nobody knows
			// (TestAHandlerHearsNoDeleteOfAnObjectTheIndexRejectedAtItsCreate).
			return nil
		}
		if err := i.indexer.Delete(d.Object); err != nil {
			return err
		}
		tell(notification[T]{kind: deleteNotification, obj: d.Object, flag: d.FinalStateUnknown})
		return nil
	}

	old, exists := i.indexer.Get(key)
	if !exists {
		if err := i.indexer.Add(d.Object); err != nil {
			return err
		}
		tell(notification[T]{kind: addNotification, obj: d.Object, flag: initial})
		return nil
	}
	if d.Type == deltafifo.Replaced && replacedByAnother(old, d.Object) {
		// A relist found the cached object deleted and another made
		// under its name while the watch was down: a deletion the watch
		// missed, then a new object, as a watch would have told them,
		// not an update from one object to another (client-go sends an
		// update). So every handler hears of the delete, a filter that
		// passes every delete included, and of the new object
		// (TestADeletionTheWatchMissedBehindARecreatedNameReachesHandlersAsADelete,
		// TestAGenerationChangedHandlerHearsOfAnObjectARelistFoundDeletedAndMadeAgain).
		// The delete is applied first, so a new object the index refuses
		// leaves nothing cached, as on the watch path
		// (TestARelistFindingAnIndexRejectedObjectOfANewUIDDoesNotKeepTheDeletedObject).
		if err := i.indexer.Delete(old); err != nil {
			return err
		}
		tell(notification[T]{kind: deleteNotification, obj: old, flag: true})
		if err := i.indexer.Add(d.Object); err != nil {
			return err
		}
		tell(notification[T]{kind: addNotification, obj: d.Object, flag: initial})
		return nil
	}
	if err := i.indexer.Update(d.Object); err != nil {
		return err
	}
	// A Sync, or a relisted object whose resourceVersion and UID did not
	// change, is a reminder, not a change: only handlers whose resync
	// this pop answers get it, as OnUpdate(obj, obj), and each once. A
	// UID that appears or goes at the same version is a change
	// (TestARelistGivingAnObjectWithNoUIDAUIDAtTheSameVersionReachesHandlers).
	if d.Type == deltafifo.Sync ||
		(d.Type == deltafifo.Replaced && old.GetResourceVersion() == d.Object.GetResourceVersion() && old.GetUID() == d.Object.GetUID()) {
		i.remind(d.Object, *owed)
		*owed = nil
		return nil
	}
	tell(notification[T]{kind: updateNotification, old: old, obj: d.Object})
	return nil
}

// remind tells each handler in owed still registered of obj, as a
// resync: OnUpdate(obj, obj). The caller holds mu.
func (i *Informer[T]) remind(obj T, owed map[*listener[T]]bool) {
	if len(owed) == 0 {
		return
	}
	for _, l := range i.listeners {
		if owed[l] {
			l.add(notification[T]{kind: updateNotification, old: obj, obj: obj})
		}
	}
}

// replacedByAnother reports whether obj, listed under old's key, is
// another object: both have a UID, and they differ (no UID to tell
// them apart: one object). A server that counts
// versions per object may give the new one the old one's resourceVersion
// (TestARelistReplacingAnObjectAtTheSameVersionReachesTheArrivalsHandler),
// so the UID, not the version, tells them apart.
func replacedByAnother[T informer.Object](old, obj T) bool {
	return old.GetUID() != "" && obj.GetUID() != "" && old.GetUID() != obj.GetUID()
}

// distribute hands n to every handler. It never blocks. The caller
// holds mu.
func (i *Informer[T]) distribute(n notification[T]) {
	for _, l := range i.listeners {
		l.add(n)
	}
}
