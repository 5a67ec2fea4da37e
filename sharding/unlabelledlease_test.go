package sharding_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// The sharder finds a ring's Leases by their ring label. Someone strips
// the labels off the Lease of member a, which goes on renewing: to the
// sharder's poll the Lease is gone, and a drops off the ring. A renew
// that kept whatever labels it found left the Lease unlabelled for as
// long as a lived, and so did its release: the sharder never saw a
// again, its takeovers (creates) failed with AlreadyExists for ever, and
// once a left, its objects stayed labelled with it for good, reconciled
// by no one.
//
// Passing: a's next renews put the labels back, so a is on the ring
// again within a lease; when a leaves, its objects move to b.
func TestAMemberLeaseStrippedOfItsRingLabelsIsLabelledAgainAndItsObjectsMoveWhenItLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		const parents = 20
		m := joinTwo(t, c, c.cfg, parents)
		a, ctx, ns, cfg, guard := m.a, m.ctx, c.ns, c.cfg, time.Minute
		moved := count(m.labels, "move")

		require.NoError(t, must(leaderelection.NewClient(cfg)).Patch(types.MergePatchType).Namespace(ns).Resource("leases").
			Name(sharding.LeaseName(ring, a)).Body([]byte(`{"metadata":{"labels":null}}`)).Do(ctx).Error())
		time.Sleep(leaseDuration + 4*retryPeriod) // past the wait before a takeover, and a few polls more
		require.Equal(t, moved, count(m.labels, "move"), "objects moved off a live member")
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard) // a's Lease is found by its ring label again

		m.stopA() // a leaves, releasing its Lease: its objects go to b
		owners, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		for _, owner := range owners {
			require.Equal(t, alive[0], owner)
		}
		requireNoOverlap(t, m.rec)
	})
}
