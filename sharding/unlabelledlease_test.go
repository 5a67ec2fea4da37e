package sharding_test

import (
	"context"
	"sync"
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
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 20
		createParents(ctx, t, c.core, ns, parents)

		rec := newRecords()
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		startSharder(ctx, t, &wg, cfg, ns, &labels)
		ctxA, stopA := context.WithCancel(ctx)
		defer stopA()
		wg.Go(func() { runReplica(ctxA, t, cfg, ns, "a", rec) })
		guard := time.Minute // simulated: many times what converging takes
		_, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		a := alive[0]
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)
		moved := count(&labels, "move")

		require.NoError(t, must(leaderelection.NewClient(cfg)).Patch(types.MergePatchType).Namespace(ns).Resource("leases").
			Name(sharding.LeaseName(ring, a)).Body([]byte(`{"metadata":{"labels":null}}`)).Do(ctx).Error())
		time.Sleep(leaseDuration + 4*retryPeriod) // past the wait before a takeover, and a few polls more
		require.Equal(t, moved, count(&labels, "move"), "objects moved off a live member")
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard) // a's Lease is found by its ring label again

		stopA() // a leaves, releasing its Lease: its objects go to b
		owners, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		for _, owner := range owners {
			require.Equal(t, alive[0], owner)
		}
		requireNoOverlap(t, rec)
	})
}
