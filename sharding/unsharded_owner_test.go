package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// An object whose controller owner is not sharded (here a Secret, which
// the sharder does not shard) is reconciled by its member under its own
// key, as any object is when the member enqueues with EnqueueKey. So it
// must leave a live member by a drain, like every other object: while
// that member reconciles it, the sharder only asks it to let go, and the
// new member reconciles it only after the old one acknowledged. Moved
// directly, the new member would reconcile it while the old one still
// did.
func TestAnObjectWhoseOwnerIsNotShardedLeavesALiveMemberOnlyByADrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		// Two members, each reconciling every key it is given through
		// sharding.Reconciler. The first reconcile of the object holds its
		// key until the test lets go.
		held := holdFirstReconcileOf("settings") // the only object
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, cfg, ns, shard, labels.Everything(), held.of(shard.Member))
		})
		guard := time.Minute // simulated: many times what this takes

		old, want := createOffRing(ctx, t, c, members, "5ec7e700-0000-4000-8000-000000000001")
		first := receive(t, held.began, guard)
		require.Equal(t, old, first.member, "its member reconciles it under its own key")

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "settings")
		step := receive(t, labelled, guard)
		require.Equal(t, "drain", step.action,
			"while %s reconciled it, the object whose owner is not sharded was %q to %s, not drained", old, step.action, step.member)

		held.release() // the old member's reconcile ends; its next turn acknowledges the drain
		done := receive(t, held.ended, guard)
		require.Equal(t, old, done.member)
		step = receive(t, labelled, guard)
		require.Equal(t, labelStep{"assign", want}, step.labelStep, "once let go, the object goes to the ring's member")
		next := receive(t, held.began, guard)
		require.Equal(t, want, next.member, "the new member reconciles it")
		require.False(t, next.at.Before(done.at), "the new member began before the old one's reconcile ended")
	})
}

// A member may key its queue by ring key instead (EnqueueMapped with
// RingKey, or EnqueueOwner): an object whose controller owner is not in
// its cache (not sharded, or deleted) then reaches it only under that
// owner's key, which Reconciler finds absent. The drain of such an
// object is acknowledged there, under the key the member holds for it,
// so it leaves the live member all the same.
func TestAnObjectDrainedFromAMemberThatKeysByRingKeyIsLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconciler(ctx, t, cfg, ns, shard)
		})
		guard := time.Minute // simulated: many times what this takes

		_, want := createOffRing(ctx, t, c, members, "5ec7e700-0000-4000-8000-000000000002")

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "settings")
		require.Equal(t, "drain", receive(t, labelled, guard).action, "the object leaves its live member by a drain")
		require.Equal(t, labelStep{"assign", want}, receive(t, labelled, guard).labelStep,
			"the member that keys by ring key lets the drained object go, and the ring's member gets it")
	})
}

// createOffRing creates the ConfigMap "settings", whose controller is a
// Secret with uid (which the sharder does not shard): it sits on the ring
// at the Secret's key, and is labelled with old, the one of the two
// members that the ring does not choose for it (want).
func createOffRing(ctx context.Context, t *testing.T, c *fakeCluster, members []string, uid types.UID) (old, want string) {
	isController := true
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: c.ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "credentials", UID: uid, Controller: &isController}}}}
	want = must(sharding.NewRing(members, 0)).Owner(sharding.RingKey(obj))
	old = members[0]
	if old == want {
		old = members[1]
	}
	obj.Labels = map[string]string{sharding.Shard{Ring: ring}.Label(): old}
	require.NoError(t, c.core.Post().Namespace(c.ns).Resource("configmaps").Body(obj).Do(ctx).Error())
	return old, want
}
