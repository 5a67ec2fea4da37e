package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// The mirror of TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain: a
// member that keys by ring key reconciles a child under its parent's key.
// If the child is orphaned (its controller reference removed: a
// ReplicaSet releasing a Pod) while that reconcile runs, its ring key
// becomes its own, which the ring may place on another member. The old
// member's reconcile of the parent's key, which began with the child in
// it, is still running: the child must not reach the other member before
// it has ended ("so no two members reconcile one object at once").
func TestAChildOrphanedWhileItsParentsKeyIsReconciledDoesNotReachAnotherMemberMidReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, ctx, wg, held := startHeldRingKeyMembers(t, "parent")
		ns := c.ns
		// A parent and its child that the ring places on different members.
		r := must(sharding.NewRing(held.members, 0))
		parent := c.createConfigMap(ctx, t, "parent", "", nil)
		child := c.createConfigMap(ctx, t, nameOff(r, ns, "child", r.Owner(ns+"/parent")), "", parent).Name

		labelled := startSharderReportingLabelsOf(ctx, t, wg, c.cfg, ns, child)
		guard := time.Minute
		holder := receive(t, held.began, guard).member
		require.Equal(t, r.Owner(ns+"/parent"), holder)
		require.Equal(t, holder, labelOf(ctx, t, c.core, ns, child), "the child sits with its parent")
		for len(labelled) > 0 {
			<-labelled // its assignment with the parent
		}

		// The child is orphaned while its parent's key is reconciled.
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(child).
			Body([]byte(`{"metadata":{"ownerReferences":null}}`)).Do(ctx).Error())

		time.Sleep(10 * time.Second) // simulated: the drain, its acknowledgement and the move all fit many times
		require.Empty(t, held.ended, "the reconcile of the parent's key is still held")
		other := r.Owner(ns + "/" + child)
		var steps []labelStep // all while the parent's key was held
		for len(labelled) > 0 {
			steps = append(steps, (<-labelled).labelStep)
		}
		require.NotEqual(t, other, labelOf(ctx, t, c.core, ns, child),
			"the orphaned child reached %s while %s still reconciled its parent's key, which began with the child in it (sharder's steps: %+v)", other, holder, steps)
		held.release()
	})
}

// The same with a sharded new parent: a child re-parented (its controller
// reference moved from one sharded parent to another: a Pod released by
// one ReplicaSet and adopted by another) while its old parent's key is
// reconciled by a member that keys by ring key. The sharder drains it
// toward the new parent's member (decideChild), and the old member
// acknowledges under the new parent's key, which it is not working on;
// but its reconcile of the old parent's key, begun with the child in it,
// still runs. The child must not reach the new parent's member first.
func TestAChildReparentedWhileItsOldParentsKeyIsReconciledDoesNotReachTheNewParentsMemberMidReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, ctx, wg, held := startHeldRingKeyMembers(t, "rs-old")
		ns := c.ns
		// An old and a new parent that the ring places on different
		// members, and a child of the old one.
		r := must(sharding.NewRing(held.members, 0))
		oldP := c.createConfigMap(ctx, t, "rs-old", "", nil)
		newP := c.createConfigMap(ctx, t, nameOff(r, ns, "rs", r.Owner(ns+"/rs-old")), "", nil)
		c.createConfigMap(ctx, t, "pod", "", oldP)

		var counts sync.Map
		startSharder(ctx, t, wg, c.cfg, ns, &counts)
		holder := receive(t, held.began, time.Minute).member
		require.Equal(t, r.Owner(ns+"/"+oldP.Name), holder)
		require.Equal(t, holder, labelOf(ctx, t, c.core, ns, "pod"), "the child sits with its old parent")

		// Re-parented while its old parent's key is reconciled.
		c.adopt(ctx, t, newP, "pod")

		time.Sleep(10 * time.Second) // simulated: the drain, its acknowledgement and the move all fit many times
		require.Empty(t, held.ended, "the reconcile of the old parent's key is still held")
		newMember := r.Owner(ns + "/" + newP.Name)
		require.NotEqual(t, newMember, labelOf(ctx, t, c.core, ns, "pod"),
			"the re-parented child reached %s (its new parent's member) while %s still reconciled its old parent's key, which began with the child in it", newMember, holder)
		held.release()
	})
}

// heldRingKeyMembers is members a and b of the test ring, each
// reconciling by ring key (runRingKeyReconcilerWith) with a
// heldReconcile: the first reconcile of one key, on whichever member,
// is held until the test releases it.
type heldRingKeyMembers struct {
	*heldReconcile
	members []string // their ids, sorted
}

// startHeldRingKeyMembers starts a fake cluster and those members in it,
// holding the first reconcile of the key named name, and returns once
// each has begun a term: the cluster, the context they run in, which
// ends with the test, and the WaitGroup of their goroutines, which the
// test waits for as it ends.
func startHeldRingKeyMembers(t *testing.T, name string) (*fakeCluster, context.Context, *sync.WaitGroup, *heldRingKeyMembers) {
	t.Helper()
	c := newFakeCluster(t, nil)
	ctx := t.Context()
	wg := new(sync.WaitGroup)
	t.Cleanup(wg.Wait)
	held := &heldRingKeyMembers{heldReconcile: holdFirstReconcileOf(name)}
	held.members = startMembers(ctx, t, wg, c.cfg, c.ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
		runRingKeyReconcilerWith(ctx, t, c.cfg, c.ns, shard, held.of(shard.Member))
	})
	return c, ctx, wg, held
}
