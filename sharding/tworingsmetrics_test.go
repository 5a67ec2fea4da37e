package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// One process runs the sharders of two rings over the same resource
// (two controllers of ConfigMaps, each sharded), with one metrics
// Registry, as metrics.Registry asks: one per process. Each sharder's
// metadata informer was named after the resource and scope alone, so
// the second to sync found the name taken (a *metrics.DuplicateError),
// failed its sync, and retried it for ever: its ring's objects were
// never labelled.
//
// Passing: both rings label every object, and neither sharder's sync
// ever fails.
func TestTheShardersOfTwoRingsOverOneResourceShareAMetricsRegistry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 10
		createParents(ctx, t, c.core, ns, parents)

		memory := metrics.NewMemory()
		reg := must(metrics.NewRegistry(memory))
		rings := []string{ring, "invoices"}
		labels := make([]sync.Map, len(rings))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		for i, r := range rings {
			member := must(sharding.NewMember(sharding.MemberConfig{
				Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: r, Name: "a",
				LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
				Run: func(ctx context.Context, _ sharding.Shard) { <-ctx.Done() },
			}))
			wg.Go(func() { member.Run(ctx) })
			startSharder(ctx, t, &wg, cfg, ns, &labels[i], func(sc *sharding.SharderConfig) {
				sc.Ring, sc.Metrics, sc.MaxSyncBackoff = r, reg, retryPeriod
			})
		}

		guard := time.Minute // simulated: many times what assigning takes
		require.Eventually(t, func() bool {
			return count(&labels[0], "assign") == parents && count(&labels[1], "assign") == parents
		}, guard, 100*time.Millisecond, "both rings assign every object")
		for _, r := range rings {
			failures, _ := memory.Value("listwatch_sharder_sync_failures_total", r)
			require.Zero(t, failures, "ring %s's sharder failed to sync", r)
		}
	})
}
