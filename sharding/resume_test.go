package sharding_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

// The sharder keeps no state of its own. One is stopped in the middle of
// a rebalance, after its first drain; a new sharder, started cold in its
// place, reads the drains and labels the old one left and finishes the
// rebalance, with no two members reconciling one key at once.
func TestANewSharderFinishesTheRebalanceTheOldOneStarted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cfg := fast(cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	core := must(testenv.CoreV1Client(cp.Config()))
	const parents = 40
	createParents(ctx, t, core, ns, parents)

	rec := newRecords()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	guard := 2 * time.Minute // against hanging, not a timing
	firstCtx, stopFirst := context.WithCancel(ctx)
	var first, second sync.Map
	startSharder(firstCtx, t, &wg, cfg, ns, &first)
	wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
	awaitConverged(ctx, t, cp.Config(), ns, 1, 2*parents, guard)

	wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
	require.Eventually(t, func() bool {
		n, ok := first.Load("drain")
		return ok && n.(*atomic.Int64).Load() > 0
	}, guard, time.Millisecond, "the first sharder starts draining to b")
	stopFirst()

	startSharder(ctx, t, &wg, cfg, ns, &second)
	awaitConverged(ctx, t, cp.Config(), ns, 2, 2*parents, guard)
	acted := 0
	second.Range(func(_, n any) bool { acted += int(n.(*atomic.Int64).Load()); return true })
	drained, _ := first.Load("drain")
	t.Logf("the first sharder drained %d parents before it stopped; the second made %d label changes to finish",
		drained.(*atomic.Int64).Load(), acted)
	require.Positive(t, acted, "the second sharder finished the rebalance")
	requireNoOverlap(t, rec)
}
