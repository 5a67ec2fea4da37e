package sharding_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// The sharder keeps no state of its own. One is stopped in the middle of
// a rebalance, after its first drain; a new sharder, started cold in its
// place, reads the drains and labels the old one left and finishes the
// rebalance, with no two members reconciling one key at once.
func TestANewSharderFinishesTheRebalanceTheOldOneStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 40
		createParents(ctx, t, c.core, ns, parents)

		rec := newRecords()
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		guard := 2 * time.Minute // simulated: many times what this takes
		firstCtx, stopFirst := context.WithCancel(ctx)
		var first, second sync.Map
		startSharder(firstCtx, t, &wg, cfg, ns, &first, func(sc *sharding.SharderConfig) {
			counting := sc.OnLabel
			sc.OnLabel = func(action string, key informer.Key, member string) {
				counting(action, key, member)
				if action == "drain" {
					stopFirst() // at its first drain: its other workers' PATCHes in flight may land too
				}
			}
		})
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)

		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
		receive(t, firstCtx.Done(), guard) // the first sharder started draining to b, and stops

		startSharder(ctx, t, &wg, cfg, ns, &second)
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)
		acted := 0
		second.Range(func(_, n any) bool { acted += int(n.(*atomic.Int64).Load()); return true })
		t.Logf("the first sharder drained %d parents before it stopped; the second made %d label changes to finish",
			count(&first, "drain"), acted)
		require.Positive(t, acted, "the second sharder finished the rebalance")
		requireNoOverlap(t, rec)
	})
}
