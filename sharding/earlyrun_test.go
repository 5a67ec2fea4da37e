package sharding_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member's Run may return while its term still lasts: the example's
// runTerm does so when its informer cannot be made, or does not sync
// within the factory's SyncTimeout (two minutes of a 403, say). Nothing
// reconciles under that id any more, nor acknowledges a drain; yet the
// Member went on renewing its Lease, so the sharder counted it alive,
// gave it objects and drained its objects for ever. A Member "runs
// MemberConfig.Run meanwhile" while it holds its Lease: once Run has
// returned, the term is over, and the member lets its Lease go and
// joins again under a new id, as after any other end of a term.
//
// Passing: the first id's Lease is no longer held by it within a
// LeaseDuration after its Run returned, and Run is called again for a
// new id.
func TestAMemberWhoseRunReturnsBeforeItsTermEndsLetsItsLeaseGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		terms := make(chan string, 10)
		var started atomic.Int32
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: "a",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, shard sharding.Shard) {
				terms <- shard.Member
				if started.Add(1) > 1 {
					<-ctx.Done() // a later term: works until its end
				}
				// The first term's work gives up at once: its informer
				// could not sync, say.
			},
		}))
		wg.Go(func() { member.Run(ctx) })
		first := receive(t, terms, time.Minute)

		time.Sleep(leaseDuration) // simulated: many renews
		lease := &coordinationv1.Lease{}
		err := must(leaderelection.NewClient(cfg)).Get().Namespace(ns).Resource("leases").
			Name(sharding.LeaseName(ring, first)).Do(ctx).Into(lease)
		if err == nil {
			holder := ""
			if lease.Spec.HolderIdentity != nil {
				holder = *lease.Spec.HolderIdentity
			}
			require.NotEqual(t, first, holder,
				"member %s's Run returned %v ago, yet it still holds and renews its Lease: the sharder counts it alive", first, leaseDuration)
		}
		second := receive(t, terms, time.Minute)
		require.NotEqual(t, first, second, "the member joined again under a new id")
	})
}
