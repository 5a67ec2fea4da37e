package sharding

import (
	"context"
	"errors"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
)

// keptChildren are drained children a call left with their parent, the
// object at the call's key, which this member keeps (drainsUnder: a
// child follows its parent, and the sharder takes its drain back). Should
// the parent be deleted before the sharder takes the drain back, nothing
// would bring a key that finds the child: for a member that keys by ring
// key, the parent's delete brings the parent's ring key (its unsharded
// owner's, which may have changed since), the child's events bring the
// parent's own key, and the child does not change
// (TestADrainedChildLeftWithAKeptParentIsLetGoOnceThatParentIsDeleted,
// TestAKeptChildIsLetGoOnceItsParentIsDeletedAfterItsParentsRingKeyChanged).
// So every call, whatever its key, looks at them (payKept): a call comes
// with the parent's delete, and each record costs one cache read. A
// record is dropped once its child has moved, undrained, or has another
// parent.
type keptChildren struct {
	mu sync.Mutex
	by map[informer.Key]types.UID // child key -> the UID of the parent it was left with; guarded by mu
}

// keep records child as left with its kept parent.
func (k *keptChildren) keep(child informer.Key, parent types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.by == nil {
		k.by = map[informer.Key]types.UID{}
	}
	k.by[child] = parent
}

// any reports whether a child is recorded.
func (k *keptChildren) any() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.by) > 0
}

// takeIf returns and forgets the records that gone, asked under the
// lock, says are to be paid or dropped; the others stay.
func (k *keptChildren) takeIf(gone func(child informer.Key, parent types.UID) bool) map[informer.Key]types.UID {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[informer.Key]types.UID{}
	for child, parent := range k.by {
		if gone(child, parent) {
			out[child] = parent
			delete(k.by, child)
		}
	}
	return out
}

// keepChildren records the drained children of parent, the object at
// c's key, that c left with it (drainsUnder), if this member keeps
// parent (labelled for it, not draining: a parent that leaves takes
// them along, letGoChildren).
func (a acker) keepChildren(parent metav1.Object, left []metav1.Object) {
	labels := parent.GetLabels()
	if labels[a.shard.Label()] != a.shard.Member || labels[a.shard.DrainLabel()] != "" {
		return
	}
	for _, child := range left {
		a.kept.keep(informer.KeyFor(child), parent.GetUID())
	}
}

// payKept lets go, in call c, the recorded children still drained here
// and still their parent's whose parent has left this member's cache
// (deleted, or let go: a parent let go takes its drained children along,
// letGoChildren, but one that failed is owed and looked at here too),
// and forgets those that moved, undrained, or have another parent; a
// child whose parent is still here stays recorded. A failure is owed
// under c's key (letGoChild) with no version of the parent as it went:
// the parent has left the cache, which never shows it again unless it
// comes back, so any version of it seen here later is it back, and holds
// the child (TestAKeptChildWhoseParentMovedAwayIsNotLetGoOnceThatParentIsBackAndKept).
func (a acker) payKept(ctx context.Context, c *call) error {
	if !a.kept.any() {
		return nil
	}
	var errs []error
	for key, parentUID := range a.kept.takeIf(func(key informer.Key, parentUID types.UID) bool {
		child, ok := a.cached(key)
		if !a.keptHere(child, ok, parentUID) {
			return true // nothing to do: forget it
		}
		parent, ok := a.cached(ringKeyOf(child))
		return !ok || parent.GetUID() != parentUID
	}) {
		if child, ok := a.cached(key); a.keptHere(child, ok, parentUID) {
			errs = append(errs, a.letGoChild(ctx, c, child, letGone{parentUID: notSeenGoing}))
		}
	}
	return errors.Join(errs...)
}

// notSeenGoing is the version letGone records for a parent that left
// the cache unseen by the call (payKept): no version the cache shows is
// the one it went at, so any is it back (backHere).
const notSeenGoing = ""

// keptHere reports whether child (ok: in the cache) is still drained on
// this member and a child of parentUID.
func (a acker) keptHere(child metav1.Object, ok bool, parentUID types.UID) bool {
	if !ok || child.GetLabels()[a.shard.Label()] != a.shard.Member || child.GetLabels()[a.shard.DrainLabel()] == "" {
		return false
	}
	ref := metav1.GetControllerOf(child)
	return ref != nil && ref.UID == parentUID
}
