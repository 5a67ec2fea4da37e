package sharding_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// Member a's replica is cut off (every request of it answered 503), so
// its Lease, still naming a, is never renewed nor released; then someone
// strips the Lease's ring labels. The sharder finds Leases by label, so
// to it a's Lease is absent: it waits that out and takes a over by a
// create, which the Lease still there answers AlreadyExists, poll after
// poll. Nothing put the labels back (a could not write), so a's objects
// stayed labelled with it for good, reconciled by no one.
//
// Passing: the sharder, answered AlreadyExists, puts the ring's labels
// back on the Lease it could not see, judges it as any Lease it sees,
// takes it over once expired, and a's objects move to b.
func TestADeadMembersLeaseStrippedOfItsRingLabelsIsFoundAgainAndItsObjectsMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cutOff atomic.Bool
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "replica-a" && cutOff.Load() {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		})
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
		wg.Go(func() { runReplica(ctx, t, c.as("replica-a"), ns, "a", rec) })
		guard := time.Minute // simulated: many times what converging takes
		_, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		a := alive[0]
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)

		cutOff.Store(true)
		synctest.Wait()
		require.NoError(t, must(leaderelection.NewClient(cfg)).Patch(types.MergePatchType).Namespace(ns).Resource("leases").
			Name(sharding.LeaseName(ring, a)).Body([]byte(`{"metadata":{"labels":null}}`)).Do(ctx).Error())

		owners, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		for _, owner := range owners {
			require.Equal(t, alive[0], owner, "an object stayed with the cut-off member %s", a)
		}
		requireNoOverlap(t, rec)
	})
}
