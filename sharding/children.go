package sharding

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
)

// Children follow their parent's handover and never run ahead of it. A
// member reconciles a parent together with its children (events of a
// child enqueue its owner's key), so a child that reached the new member
// while the old one still owned the parent would be missing from the old
// member's cache mid-reconcile: it may create the child again. So a child
// (an object whose controller owner is a sharded object) moves only:
//
//   - when its parent is given to a member (assign, or move off a dead
//     member): the children go first, then the parent (moveChildren);
//     the old owner has let go of the parent by then — acknowledged its
//     drain, or died for certain — and a child on a live member is
//     drained first, like any object (childStep);
//   - or to catch up with a parent already settled on a member, not
//     draining (decideChild): a child made after the parent moved.

// errChildChanged says a parent's children could not be moved because
// the parent or a child changed since the sharder's cache saw it, or
// that a child's parent is not in the cache yet (ownerLags): the step is
// tried again shortly (childRetry), once the cache has caught up, not
// after the queue's growing backoff.
var errChildChanged = errors.New("sharding: a child or its parent changed since the cache saw it")

// childRetry is how soon a parent whose child changed, or a child whose
// parent the cache lacks, is looked at again.
const childRetry = 100 * time.Millisecond

// controllerIndex indexes the sharder's objects by the UID of their
// controller owner, to find a parent's children in every resource.
const controllerIndex = "sharding.listwatch.dev/controller-uid"

// controllerUID is controllerIndex's function.
func controllerUID(obj *metav1.PartialObjectMetadata) ([]string, error) {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// parentOf returns obj's controller owner if it is one of the sharded
// objects in the sharder's caches (its UID matches), or nil: an object
// whose owner is not sharded is decided by the ring like any other.
func parentOf(obj *metav1.PartialObjectMetadata, all []*resource) (*metav1.PartialObjectMetadata, *resource) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil, nil
	}
	for _, r := range all {
		for _, key := range []informer.Key{{Namespace: obj.Namespace, Name: ref.Name}, {Name: ref.Name}} {
			if parent, err := getMeta(r, key); err == nil && parent.UID == ref.UID {
				return parent, r
			}
		}
	}
	return nil, nil
}

// ownerLags returns errChildChanged if obj's controller owner, missing
// from the sharder's caches, is a sharded object all the same: the API
// server has it, with the UID obj names, in a sharded resource of the
// owner's API group. Then obj is a child whose parent the cache has not
// seen yet (two resources are two watches, and one may lag), not an
// orphan, and it waits for its parent rather than move ahead of it. It
// costs one GET per sharded resource of that group; an owner of another
// group (not sharded) costs none. A cluster-scoped owner of a namespaced
// object is not looked for.
func ownerLags(ctx context.Context, obj *metav1.PartialObjectMetadata, all []*resource) error {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil // names no resource the sharder could shard
	}
	for _, r := range all {
		if r.gvr.Group != gv.Group {
			continue
		}
		owner, err := freshMeta(ctx, r, informer.Key{Namespace: obj.Namespace, Name: ref.Name})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		case owner.UID == ref.UID:
			return errChildChanged
		}
	}
	return nil
}

// decideChild lets a child catch up with its parent: once the parent is
// labelled with a live member and not draining, the child is labelled
// with that member too (drained first if it sits on another live member,
// its own children moved first: childStep, moveChildren). While the
// parent is unlabelled or draining, the
// child stays where it is: the parent's handover takes it along. The
// parent is read from the API server before the child moves, as in
// moveChildren: a stale cache could name the parent's previous owner.
func (s *Sharder) decideChild(ctx context.Context, r *resource, key informer.Key, child *metav1.PartialObjectMetadata, pr *resource, parent *metav1.PartialObjectMetadata, ring *liveRing, all []*resource) error {
	shard := Shard{Ring: s.cfg.Ring}
	owner := parent.Labels[shard.Label()]
	if owner == "" || parent.Labels[shard.DrainLabel()] != "" || !ring.isAlive(owner) {
		return nil
	}
	current := child.Labels[shard.Label()]
	step := s.childStep(child, owner, ring)
	if step == childStays {
		return nil
	}
	fresh, err := freshMeta(ctx, pr, informer.KeyFor(parent))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if fresh.ResourceVersion != parent.ResourceVersion {
		return errChildChanged
	}
	if step == childDrains {
		yes := drainValue(child)
		return s.patch(ctx, r, key, child.ResourceVersion, "drain", map[string]*string{shard.DrainLabel(): &yes}, owner)
	}
	if err := s.moveChildren(ctx, r, child, owner, ring, all); err != nil {
		return err // its own children go first
	}
	action, reported := childReport(current, owner)
	return s.patch(ctx, r, key, child.ResourceVersion, action, map[string]*string{shard.Label(): &owner, shard.DrainLabel(): nil}, reported)
}

// childReport names a child's relabelling to member for OnLabel: a
// drain taken back ("undrain", no member) when it is there already,
// else "assign" or "move" (childAction)
// (TestAChildsDrainTakenBackIsReportedAsAnUndrain).
func childReport(current, member string) (action, reported string) {
	if current == member {
		return "undrain", ""
	}
	return childAction(current), member
}

// What a child needs to reach the member its parent goes to.
const (
	childStays  = iota // it is there, or must wait where it is
	childMoves         // relabel it: no live member may be reconciling it
	childDrains        // drain it first: its live member may be
)

// childStep says how child reaches member, its parent's. A child moves
// at once if no member holds it, or member already does (a drain is
// taken back), or its member is dead for certain. On a live member it is
// drained, like every object leaving a live member, and moves once that
// member let it go: the member may reconcile it under its own key (a
// member keying by object, a Reconciler of the child's own resource, a
// child adopted there: TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain,
// TestAChildKeyedByItsOwnKeyIsNotReconciledByTwoMembersWhenItsParentMoves,
// TestAChildOfAnotherResourceDoesNotReachItsParentsNextMemberWhileItsOwnKeysReconcileRuns).
// While it drains, or its member is neither alive nor dead for certain,
// it waits.
func (s *Sharder) childStep(child *metav1.PartialObjectMetadata, member string, ring *liveRing) int {
	shard := Shard{Ring: s.cfg.Ring}
	current, draining := child.Labels[shard.Label()], child.Labels[shard.DrainLabel()] != ""
	switch {
	case current == member && !draining:
		return childStays
	case current == "" || current == member || !possibleMember(s.cfg.Ring, current) || s.members.deadForCertain(current):
		return childMoves
	case ring.isAlive(current):
		if draining && !shard.staleDrain(child) {
			return childStays // its member acknowledges, and the child moves then
		}
		return childDrains
	}
	s.members.track(current) // not seen alive is not dead: judge it first
	return childStays
}

// moveChildren labels every child of parent, in every sharded resource,
// with member, before the parent itself is: so the children are there
// when the new owner first reconciles the parent. A child on a live
// member is drained first (childStep). Any child it could not move (a
// conflict: the sharder's cache is behind), that drains or waits first,
// or that the cache shows on member already but the API server at
// another version, fails the parent's step, which is tried again soon.
func (s *Sharder) moveChildren(ctx context.Context, pr *resource, parent *metav1.PartialObjectMetadata, member string, ring *liveRing, all []*resource) error {
	return s.moveTree(ctx, pr, parent, member, ring, all, map[types.UID]bool{})
}

// moveTree is moveChildren below parent, whose walk has met the objects
// in visited already: an object that names itself its controller under
// another name, or a cache that changed mid-walk, makes a cycle the walk
// must not follow
// (TestAnObjectThatControlsItselfUnderAnotherNameIsAssignedWithBoundedRequests).
func (s *Sharder) moveTree(ctx context.Context, pr *resource, parent *metav1.PartialObjectMetadata, member string, ring *liveRing, all []*resource, visited map[types.UID]bool) error {
	visited[parent.UID] = true
	shard := Shard{Ring: s.cfg.Ring}
	children := 0
	for _, r := range all {
		n, err := r.objects.Indexer().IndexKeys(controllerIndex, string(parent.UID))
		if err != nil {
			return err
		}
		children += len(n)
	}
	if children == 0 {
		return nil
	}
	// The cache may be behind: the parent may already be labelled with
	// another member (by this sharder a moment ago, or by the last one).
	// Moving its children on a stale view would send them ahead of it, so
	// read the parent from the API server first: only if it is still the
	// version the cache holds do its children move.
	current, err := freshMeta(ctx, pr, informer.KeyFor(parent))
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if current.ResourceVersion != parent.ResourceVersion {
		return errChildChanged
	}
	waiting := false // a child drains, or waits for its member to be judged
	for _, r := range all {
		children, err := r.objects.Indexer().ByIndex(controllerIndex, string(parent.UID))
		if err != nil {
			return err
		}
		for _, child := range children {
			if visited[child.UID] {
				// Its walk began higher up: it is moved there, or its
				// waiting fails this walk's root before the root moves.
				continue
			}
			key := informer.KeyFor(child)
			labels := map[string]*string{shard.Label(): &member, shard.DrainLabel(): nil}
			switch s.childStep(child, member, ring) {
			case childStays:
				if child.Labels[shard.Label()] != member || child.Labels[shard.DrainLabel()] != "" {
					waiting = true // draining, or its member not judged yet
					continue
				}
				// There already, the cache says; but the cache may not
				// show yet this sharder's own drain of it, which its
				// member may have let go since: read it from the API
				// server, and only if it is still that version does the
				// parent go to it
				// (TestAParentAssignedBackToItsMemberIsNotReconciledThereWithoutTheChildWhoseDrainTheSharderHadNotSeen).
				fresh, err := freshMeta(ctx, r, key)
				if apierrors.IsNotFound(err) {
					continue // deleted meanwhile: nothing to wait for
				}
				if err != nil {
					return err
				}
				if fresh.ResourceVersion != child.ResourceVersion {
					waiting = true
				}
				continue
			case childDrains:
				yes := drainValue(child)
				labels = map[string]*string{shard.DrainLabel(): &yes}
				waiting = true
			default:
				// A child that is a parent itself takes its own children
				// along first, as its parent does
				// (TestAChildThatIsAParentReachesItsNewMemberOnlyAfterItsOwnChildren);
				// while they wait, it waits, and its siblings go on.
				err := s.moveTree(ctx, r, child, member, ring, all, visited)
				if errors.Is(err, errChildChanged) {
					waiting = true
					continue
				}
				if err != nil {
					return err
				}
			}
			err := r.patchLabels(ctx, key, child.ResourceVersion, labels)
			if apierrors.IsNotFound(err) {
				continue // deleted meanwhile: nothing to move
			}
			if apierrors.IsConflict(err) {
				// The child changed since the cache saw it (its owner
				// writes it as it reconciles): look again soon, when the
				// cache has caught up, rather than after a growing backoff.
				return errChildChanged
			}
			if err != nil {
				return fmt.Errorf("sharding: moving child %s %s of %s to %s before it: %w", r.gvr.Resource, key, informer.KeyFor(parent), member, err)
			}
			if s.cfg.OnLabel != nil {
				action, reported := childReport(child.Labels[shard.Label()], member)
				if labels[shard.Label()] == nil {
					action, reported = "drain", member
				}
				s.cfg.OnLabel(action, key, reported)
			}
		}
	}
	if waiting {
		return errChildChanged // the parent moves once every child can go with it: look again soon
	}
	return nil
}

// enqueueChildren puts the children of parent uid back in their queues.
// A child whose parent is unlabelled or draining waits (decideChild), and
// nothing else would bring its key back, so this runs:
//   - when the parent's owner or drain label changes: a child that waited
//     follows at once, whichever of the keys the sharder took first;
//   - when the parent is deleted: until the garbage collector deletes the
//     children (if it runs, and the delete did not orphan them) they stay
//     behind, owned by a parent that is gone, and each is now decided by
//     the ring under its own key, like any orphan. The informer calls
//     this after its indexer dropped the parent, so decide sees the
//     orphan.
func (s *Sharder) enqueueChildren(all []*resource, uid types.UID) {
	for _, r := range all {
		children, err := r.objects.Indexer().ByIndex(controllerIndex, string(uid))
		if err != nil {
			s.cfg.Logger.Error("sharding: finding a parent's children", "resource", r.gvr.Resource, "err", err)
			continue
		}
		for _, child := range children {
			r.queue.Add(informer.KeyFor(child))
		}
	}
}

// childAction names a child's relabelling for OnLabel: "assign" if it had
// no owner, "move" if it had one.
func childAction(current string) string {
	if current == "" {
		return "assign"
	}
	return "move"
}

// freshMeta reads key's metadata from the API server, not the cache.
func freshMeta(ctx context.Context, r *resource, key informer.Key) (*metav1.PartialObjectMetadata, error) {
	ctx, cancel := r.request(ctx)
	defer cancel()
	out := &metav1.PartialObjectMetadata{}
	err := r.client.Get().NamespaceIfScoped(key.Namespace, key.Namespace != "").Resource(r.gvr.Resource).Name(key.Name).
		SetHeader("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").Do(ctx).Into(out)
	return out, err
}
