package sharedinformer

import (
	"errors"

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
	var errs []error
	for _, d := range deltas {
		// A change the cache refuses (an IndexFunc's error) is dropped
		// alone: the key's later changes are others the server made, and
		// a delete among them still deletes
		// (TestADeleteQueuedBehindAnUpdateTheIndexRejectsStillDeletesTheObject).
		if err := i.apply(key, d, initial); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (i *Informer[T]) apply(key informer.Key, d deltafifo.Delta[T], initial bool) error {
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
		i.distribute(notification[T]{kind: deleteNotification, obj: d.Object, flag: d.FinalStateUnknown}, false)
		return nil
	}

	old, exists := i.indexer.Get(key)
	if !exists {
		if err := i.indexer.Add(d.Object); err != nil {
			return err
		}
		i.distribute(notification[T]{kind: addNotification, obj: d.Object, flag: initial}, false)
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
		i.distribute(notification[T]{kind: deleteNotification, obj: old, flag: true}, false)
		if err := i.indexer.Add(d.Object); err != nil {
			return err
		}
		i.distribute(notification[T]{kind: addNotification, obj: d.Object, flag: initial}, false)
		return nil
	}
	if err := i.indexer.Update(d.Object); err != nil {
		return err
	}
	// A Sync, or a relisted object whose resourceVersion and UID did not
	// change, is a reminder, not a change: only handlers due for a resync
	// get it. A UID that appears or goes at the same version is a change
	// (TestARelistGivingAnObjectWithNoUIDAUIDAtTheSameVersionReachesHandlers).
	isResync := d.Type == deltafifo.Sync ||
		(d.Type == deltafifo.Replaced && old.GetResourceVersion() == d.Object.GetResourceVersion() && old.GetUID() == d.Object.GetUID())
	i.distribute(notification[T]{kind: updateNotification, old: old, obj: d.Object}, isResync)
	return nil
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

// distribute hands n to every handler, or, for a resync, to the handlers
// whose resync is due (i.resyncing). It never blocks. The caller holds mu.
func (i *Informer[T]) distribute(n notification[T], isResync bool) {
	for _, l := range i.listeners {
		if isResync && !i.resyncing[l] {
			continue
		}
		l.add(n)
	}
}
