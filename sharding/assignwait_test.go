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

// Objects created while nothing runs stay unlabelled, and so invisible
// to every member, until the sharder has watched the Leases for a
// LeaseDuration: before that it cannot tell a live member from an
// expired one, and it labels nothing. Then it labels them all.
func TestASharderLabelsNothingUntilItHasWatchedTheLeasesForALeaseDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 10
		createParents(ctx, t, core, ns, parents)

		rec := newRecords()
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		started := time.Now()
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		startSharder(ctx, t, &wg, cfg, ns, &labels)

		shard := sharding.Shard{Ring: ring}
		for time.Since(started) < leaseDuration-retryPeriod {
			time.Sleep(retryPeriod / 4)
			synctest.Wait()
			for _, cm := range listConfigMaps(ctx, t, core, ns) {
				require.Empty(t, cm.Labels[shard.Label()], "%s labelled %v after the sharder's start, before it could judge the Leases", cm.Name, time.Since(started))
			}
		}
		require.Zero(t, count(&labels, "assign"))
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, leaseDuration+5*time.Second) // the member makes a child per parent
		t.Logf("%d parents and their children assigned %v after the sharder's start", parents, time.Since(started))
	})
}
