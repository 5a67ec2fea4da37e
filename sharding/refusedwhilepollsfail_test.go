package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// docs/16 states the liveness price of failing polls for a member whose
// Lease was deleted: an absence cannot be judged without them. A member
// whose Lease the sharder saw unchanged for its duration needs no poll:
// its takeover is guarded by the version judged. A takeover that failed
// without landing (a 503: the server never saw it) is therefore sent
// again though every poll fails from then on: the Lease, read by name,
// shows the version judged. (Found by a review: a failed takeover once
// waited for a poll, and with the polls failing the dead member's
// objects never moved.)
func TestAMemberWhoseTakeoverFailedIsTakenOverThoughThePollsFailAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const id = "dead"
		var puts atomic.Int64
		var failed atomic.Bool // the first takeover failed: the polls fail from now on
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+sharding.LeaseName(ring, id)) && puts.Add(1) == 1:
				failed.Store(true)
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable} // not landed
			case failed.Load() && r.Method == http.MethodGet && r.URL.Query().Has("labelSelector") && strings.HasSuffix(r.URL.Path, "/leases"):
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(c.cfg))
		createMemberLease(ctx, t, leases, c.ns, id) // held by id for 1 s, never renewed
		createOwnedBy(ctx, t, c.cfg, c.ns, id)
		startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{})
		time.Sleep(10 * leaseDuration)

		require.True(t, failed.Load(), "no takeover was sent: the test proves nothing")
		var lease coordinationv1.Lease
		require.NoError(t, leases.Get().Namespace(c.ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Into(&lease))
		require.NotEqual(t, id, *lease.Spec.HolderIdentity,
			"%s, judged expired by its version, was never taken over again after one takeover failed unlanded (%d PUTs in %v): refused until a poll answers, and the polls fail",
			id, puts.Load(), 10*leaseDuration)
	})
}
