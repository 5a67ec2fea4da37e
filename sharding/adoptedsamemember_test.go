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

// An orphan adopted on the very member that holds its new parent may be
// reconciled there under its own key (a member that keys by ring key
// did, before the adoption) just as one adopted on another member: when
// the parent then leaves that member, the member's acknowledgement of the
// parent's drain (under the parent's key) says nothing of the child's own
// key. The child must not reach the parent's next member before that
// reconcile has ended.
func TestAChildAdoptedOnItsParentsMemberLeavesItOnlyOnceItsOwnKeysReconcileEnded(t *testing.T) {
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
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		a := r.Owner(ns + "/orphan")
		parentName := nameOff(r, ns, "parent", a)
		b := r.Owner(ns + "/" + parentName)

		// Both on a (the parent by an earlier ring, say), before any sharder runs.
		parent := c.createConfigMap(ctx, t, parentName, a, nil)
		c.createConfigMap(ctx, t, "orphan", a, nil)
		first := receive(t, held.began, guard)
		require.Equal(t, a, first.member, "a reconciles the orphan under its own key")

		// The parent adopts it while a reconciles it.
		c.adopt(ctx, t, parent, "orphan")

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "orphan")

		// The ring gives the parent to b: a lets it go; the child follows.
		var moved labelReport
		select {
		case moved = <-labelled:
		case <-time.After(30 * time.Second): // simulated: the sharder waited a lease, drained and moved long before
		}
		require.True(t, moved.action == "" || moved.action == "drain", // a drain leaves it with a
			"the child was %q to %s at %v while a's reconcile of its own key, begun at %v, still ran", moved.action, moved.member, moved.at, first.at)
		held.release()
		done := receive(t, held.ended, guard)
		for moved.member != b || moved.action == "drain" || moved.action == "" {
			moved = receive(t, labelled, guard)
		}
		require.False(t, moved.at.Before(done.at), "it reached %s before a's reconcile ended", b)
	})
}
