package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// owedChildren are children whose acknowledgement failed after their
// parent was let go, by the key of the call that let the parent go: that
// key comes back (the failure is KeepRetrying), but the parent has left
// the cache, so nothing else would find them under it
// (TestAChildWhoseAcknowledgementAfterItsParentFailedOnceIsStillLetGoUnderARingKey).
type owedChildren struct {
	mu sync.Mutex
	by map[informer.Key]map[informer.Key]letGone // call key -> child key -> its parent, as let go; guarded by mu
}

// letGone are the objects a call let go, by UID, each at the
// resourceVersion it went at: a cache behind still shows it there, and
// any other version of it is it back (waitsForParent).
type letGone map[types.UID]string

// owe records child, whose parent went as gone says, under key.
func (o *owedChildren) owe(key, child informer.Key, gone letGone) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[informer.Key]map[informer.Key]letGone{}
	}
	if o.by[key] == nil {
		o.by[key] = map[informer.Key]letGone{}
	}
	o.by[key][child] = gone
}

// under reports whether anything is owed under key.
func (o *owedChildren) under(key informer.Key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.by[key]) > 0
}

// take returns and forgets what is owed under key.
func (o *owedChildren) take(key informer.Key) map[informer.Key]letGone {
	o.mu.Lock()
	defer o.mu.Unlock()
	owed := o.by[key]
	delete(o.by, key)
	return owed
}

// payOwed tries again the children owed under c's key that are still
// drained here and still children of the parent let go, once that parent
// is out of this member's cache: a parent back here and kept (the ring
// moved back) keeps its child, whose drain the sharder takes back
// (TestAnOwedChildIsNotLetGoOnceItsParentIsBackAndKeptOnTheMember); one
// the cache still shows draining leaves it owed, and the key retried.
func (a acker) payOwed(ctx context.Context, c *call) error {
	var errs []error
	for key, parentGone := range a.owed.take(c.key) {
		child, ok := a.cached(key)
		if !ok || child.GetLabels()[a.shard.Label()] != a.shard.Member || child.GetLabels()[a.shard.DrainLabel()] == "" {
			continue // moved or deleted since
		}
		ref := metav1.GetControllerOf(child)
		if ref == nil {
			continue // orphaned since: its own events bring its keys
		}
		if _, same := parentGone[ref.UID]; !same {
			continue // another's child now: its own events bring its keys
		}
		if parent, ok := a.cached(ringKeyOf(child)); ok && a.backHere(parent, ref.UID, parentGone) {
			if parent.GetLabels()[a.shard.DrainLabel()] == "" {
				continue // its parent is back here, kept: the sharder takes the child's drain back
			}
			a.owed.owe(c.key, key, parentGone) // its parent is back, draining anew: it goes after it
			errs = append(errs, workqueue.KeepRetrying(fmt.Errorf("sharding: the drain of %s waits for its parent, back on this member", key)))
			continue
		}
		errs = append(errs, a.letGoChild(ctx, c, child, parentGone))
	}
	return errors.Join(errs...)
}

// letGoChildren lets go, once their parent has been let go, the drained
// children of parent in this member's cache (their controller is parent,
// their ring key parent's key), and theirs in turn (visited guards
// against an owner cycle). A child drained while its parent was here (a
// Pod adopted while drained) waits for the parent: let go before, it
// would be missing from this member while the parent is reconciled
// here, should the parent's drain be taken back
// (TestAChildLetGoWithItsDrainingParentIsNotMissingWhenThatDrainIsTakenBackAndTheParentReconciled);
// let go only by a call of the parent's key, it would wait for ever for
// a member that keys by ring key, whose parent's events bring another
// key (TestAChildOfADrainingParentWhoseRingKeyIsAnothersIsLetGoUnderARingKey,
// TestAChildLeftWithAKeptParentIsLetGoOnceThatParentDrainsUnderAnotherRingKey).
// Children it cannot try, ctx having ended (a per-call deadline), are
// owed under c's key like a child whose acknowledgement failed: the
// parent has left, and no other key finds them
// (TestChildrenLeftUnacknowledgedWhenACallsDeadlinePassesAreLetGoWhenItsKeyComesBack).
func (a acker) letGoChildren(ctx context.Context, c *call, parent metav1.Object, visited letGone) error {
	visited[parent.GetUID()] = parent.GetResourceVersion()
	parentKey := informer.KeyFor(parent)
	var errs []error
	for _, child := range a.mine(parent.GetNamespace()) {
		ref := metav1.GetControllerOf(child)
		if _, seen := visited[child.GetUID()]; seen || ref == nil || ref.UID != parent.GetUID() || ringKeyOf(child) != parentKey || child.GetLabels()[a.shard.DrainLabel()] == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			key := informer.KeyFor(child)
			a.owed.owe(c.key, key, letGone{parent.GetUID(): visited[parent.GetUID()]})
			errs = append(errs, workqueue.KeepRetrying(fmt.Errorf("sharding: acknowledging the drain of %s: %w", key, err)))
			continue
		}
		errs = append(errs, a.letGoChild(ctx, c, child, visited))
	}
	return errors.Join(errs...)
}

// letGoChild lets go one drained child whose parent (in visited) has
// been let go, then its own children; a failure is owed under c's key.
func (a acker) letGoChild(ctx context.Context, c *call, child metav1.Object, visited letGone) error {
	went, err := a.acknowledge(ctx, c, child, a.stillUnder(ringKeyOf(child)), visited)
	if err != nil {
		parent := metav1.GetControllerOf(child).UID
		a.owed.owe(c.key, informer.KeyFor(child), letGone{parent: visited[parent]})
	}
	if went != nil {
		err = errors.Join(err, a.letGoChildren(ctx, c, went, visited))
	}
	return err
}
