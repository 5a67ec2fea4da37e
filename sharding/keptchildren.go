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
// child follows its parent, and the sharder takes its drain back). They
// are recorded by the parent's ring key, since, should the parent be
// deleted before the sharder takes the drain back, its delete brings
// that key to a member that keys by ring key, and nothing brings the
// child's: its own events bring its ring key, the parent's own key, and
// the child does not change (TestADrainedChildLeftWithAKeptParentIsLetGoOnceThatParentIsDeleted).
// A member that keys by object gets the parent's own key on its delete,
// where drainsUnder finds the child; its records here are dropped the
// next time the parent's ring key is called, if ever.
type keptChildren struct {
	mu sync.Mutex
	by map[informer.Key]map[informer.Key]types.UID // parent's ring key -> child key -> parent UID; guarded by mu
}

// keep records child, left with its kept parent, under the parent's
// ring key.
func (k *keptChildren) keep(parentRingKey, child informer.Key, parent types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.by == nil {
		k.by = map[informer.Key]map[informer.Key]types.UID{}
	}
	if k.by[parentRingKey] == nil {
		k.by[parentRingKey] = map[informer.Key]types.UID{}
	}
	k.by[parentRingKey][child] = parent
}

// take returns and forgets what is recorded under key.
func (k *keptChildren) take(key informer.Key) map[informer.Key]types.UID {
	k.mu.Lock()
	defer k.mu.Unlock()
	kept := k.by[key]
	delete(k.by, key)
	return kept
}

// keepChildren records the drained children of parent, the object at
// c's key, that c left with it (drainsUnder), if this member keeps
// parent (labelled for it, not draining: a parent that leaves takes
// them along, letGoChildren) and its ring key is not c's key (its delete
// would bring c's key, where drainsUnder finds them).
func (a acker) keepChildren(c *call, parent metav1.Object, left []metav1.Object) {
	labels := parent.GetLabels()
	ringKey := ringKeyOf(parent)
	if labels[a.shard.Label()] != a.shard.Member || labels[a.shard.DrainLabel()] != "" || ringKey == c.key {
		return
	}
	for _, child := range left {
		a.kept.keep(ringKey, informer.KeyFor(child), parent.GetUID())
	}
}

// payKept lets go the children recorded under c's key whose parent has
// left this member's cache (deleted: a parent let go takes its drained
// children along, letGoChildren) and that are still drained here and
// still that parent's. One whose parent is still here stays recorded. A
// failure is owed under c's key (letGoChild), the parent recorded as
// found deleted, so that no version of it a cache behind shows holds
// the child.
func (a acker) payKept(ctx context.Context, c *call) error {
	var errs []error
	for key, parentUID := range a.kept.take(c.key) {
		child, ok := a.cached(key)
		if !ok || child.GetLabels()[a.shard.Label()] != a.shard.Member || child.GetLabels()[a.shard.DrainLabel()] == "" {
			continue // moved, deleted or undrained since
		}
		if ref := metav1.GetControllerOf(child); ref == nil || ref.UID != parentUID {
			continue // orphaned or given another parent since: its own events bring its keys
		}
		if parent, ok := a.cached(ringKeyOf(child)); ok && parent.GetUID() == parentUID {
			a.kept.keep(c.key, key, parentUID) // still here: still kept
			continue
		}
		errs = append(errs, a.letGoChild(ctx, c, child, letGone{parentUID: deletedMark}))
	}
	return errors.Join(errs...)
}
