package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// "Not seen alive" is not "dead". Someone deletes the Lease of member a,
// which goes on renewing. The sharder, which no longer finds the Lease,
// must not move a's objects: it counts an absent Lease as an unchanged
// one, and would have to take it over (a guarded create, which a's renew
// beats) before moving anything. So no object moves, a keeps its term and
// its objects, and its Lease is back.
func TestTheObjectsOfALiveMemberStayWhenSomeoneDeletesItsLease(t *testing.T) {
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
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
		guard := time.Minute // simulated: many times what converging takes
		before, alive := awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)
		moved := count(&labels, "move")

		a := alive[0]
		require.NoError(t, must(leaderelection.NewClient(cfg)).Delete().Namespace(ns).Resource("leases").
			Name(sharding.LeaseName(ring, a)).Body(&metav1.DeleteOptions{}).Do(ctx).Error())
		// Past the LeaseDuration after which an unchanged Lease looks dead,
		// and a few polls more.
		time.Sleep(leaseDuration + 4*retryPeriod)

		require.Equal(t, moved, count(&labels, "move"), "objects moved off a live member")
		after, aliveAfter := awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)
		require.Equal(t, alive, aliveAfter, "both members kept their terms")
		require.Equal(t, before, after, "every object kept its owner")
		requireNoOverlap(t, rec)
	})
}
