package sharding_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member's Run gives up a second into every term (its informer cannot
// be made: a misconfiguration no retry mends). Each term is a join the
// sharder sees: it drains objects off the live members toward the new
// id, which has left by then, and takes them back. The Member joined
// again one RetryPeriod after each such term, for ever: a rebalance
// every second and a half, where a crashing controller under
// controller-runtime would be restarted by the kubelet after a backoff
// that doubles up to five minutes.
//
// Passing: in a minute, terms that each end within a second begin
// about log2(MaxRejoinBackoff/RetryPeriod) times, not forty; the drains
// they cause are logged.
func TestAMemberWhoseTermsEndAtOnceRejoinsAfterAGrowingBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 20
		createParents(ctx, t, c.core, ns, parents)
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		startSharder(ctx, t, &wg, cfg, ns, &labels)
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", newRecords()) })
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, time.Minute)

		var terms atomic.Int32
		failing := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: "c",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, _ sharding.Shard) {
				terms.Add(1)
				time.Sleep(time.Second) // simulated: it gives up
			},
		}))
		drains := count(&labels, "drain")
		wg.Go(func() { failing.Run(ctx) })
		time.Sleep(time.Minute) // simulated
		t.Logf("%d terms began in a minute; the sharder drained %d objects toward them", terms.Load(), count(&labels, "drain")-drains)
		// Waits of 0.5, 1, 2, 4, 8, 16, 30 s (the default cap) after terms
		// of 1 s: 7 terms begin within the minute; one RetryPeriod after
		// each, 40 would.
		require.LessOrEqual(t, terms.Load(), int32(10), "the member rejoined at once after each term that ended at once")
		require.GreaterOrEqual(t, terms.Load(), int32(5), "the member goes on trying")
	})
}
