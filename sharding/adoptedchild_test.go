package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/sharding"
)

// An object that a sharded parent adopts (a ReplicaSet adopting an orphan
// Pod: a controller owner reference added to an object that had none) sat
// on the ring at its own key, and may be labelled with a live member other
// than its new parent's. That member, keying by ring key, may be
// reconciling it under that key (its own, before the adoption) right now,
// so it must leave that member by a drain, like every object leaving a
// live member: it must not reach the parent's member, who reconciles it
// with the parent, before the old member's reconcile has ended.
func TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		held := holdFirstReconcileOf("orphan")
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, held.of(shard.Member))
		})
		guard := time.Minute // simulated: many times what this takes

		// A parent and an orphan that the ring places on different members.
		r := must(sharding.NewRing(members, 0))
		parent := c.createConfigMap(ctx, t, nameOff(r, ns, "parent", r.Owner(ns+"/orphan")), "", nil)
		c.createConfigMap(ctx, t, "orphan", "", nil)

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "orphan")
		require.Equal(t, labelStep{"assign", r.Owner(ns + "/orphan")}, receive(t, labelled, guard).labelStep)
		first := receive(t, held.began, guard)
		require.Equal(t, r.Owner(ns+"/orphan"), first.member, "its member reconciles it under its own key, and holds it")

		// The parent adopts the orphan while its member reconciles it.
		c.adopt(ctx, t, parent, "orphan")

		step := receive(t, labelled, guard)
		require.Equal(t, "drain", step.action,
			"while %s reconciled it, the adopted child was %q to %s (its parent's member), not drained", first.member, step.action, step.member)

		held.release()
		done := receive(t, held.ended, guard)
		moved := receive(t, labelled, guard)
		require.Equal(t, r.Owner(ns+"/"+parent.Name), moved.member, "it follows its parent at last")
		require.False(t, moved.at.Before(done.at), "it reached its parent's member before the old one's reconcile ended")
	})
}
