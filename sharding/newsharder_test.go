package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A new sharder has never seen a member renew. It judges the member's
// Lease on its own clock, from its first sight of the Lease's version,
// never by the renewTime another host's clock wrote: member m's Lease
// says it was renewed an hour ago, yet m renews within a LeaseDuration of
// the sharder's start, so m is alive. Its Lease is never taken over and
// its object never moves.
func TestANewSharderDoesNotTakeOverAMemberItHasNotYetSeenRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		leases := must(leaderelection.NewClient(cfg))
		const m = "m"
		holder, seconds, longAgo := m, int32(leaseDuration/time.Second), metav1.NewMicroTime(time.Now().Add(-time.Hour))
		require.NoError(t, leases.Post().Namespace(ns).Resource("leases").Body(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: sharding.LeaseName(ring, m), Namespace: ns,
				Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: m}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &longAgo},
		}).Do(ctx).Error())
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns,
			Labels: map[string]string{sharding.Shard{Ring: ring}.Label(): m}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(obj).Do(ctx).Error())

		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels)
		// m renews as a member would, the first time within a
		// LeaseDuration of the sharder's start. (renew reads the Lease
		// first: a takeover shows as another holder, below.)
		for range 4 * int(leaseDuration/retryPeriod) {
			time.Sleep(leaseDuration / 2)
			renew(ctx, t, leases, ns, m)
		}

		lease := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace(ns).Resource("leases").Name(sharding.LeaseName(ring, m)).Do(ctx).Into(lease))
		require.Equal(t, m, *lease.Spec.HolderIdentity, "m, renewing, keeps its Lease")
		require.Equal(t, m, labelOf(ctx, t, core, ns, obj.Name), "m's object stays on m")
		for _, action := range []string{"move", "drain"} {
			require.Zero(t, count(&labels, action), "the sharder wrote a %s", action)
		}
	})
}
