package sharding_test

import (
	"context"
	"slices"

	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// startSharder runs a sharder candidate until ctx ends; labels counts
// its successful PATCHes by action. Each of tweaks may change its config.
func startSharder(ctx context.Context, t *testing.T, wg *sync.WaitGroup, cfg *rest.Config, ns string, labels *sync.Map, tweaks ...func(*sharding.SharderConfig)) {
	sc := sharding.SharderConfig{
		Config: cfg, LeaseClient: must(leaderelection.NewClient(cfg)), LeaseNamespace: ns, Ring: ring,
		Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: ns,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Logger: testLogger,
		OnLabel: func(action string, _ informer.Key, _ string) {
			n, _ := labels.LoadOrStore(action, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		},
	}
	for _, tweak := range tweaks {
		tweak(&sc)
	}
	s, err := sharding.NewSharder(sc)
	require.NoError(t, err)
	wg.Go(func() { s.Run(ctx) })
}

// count is how many label PATCHes of action labels has counted.
func count(labels *sync.Map, action string) int64 {
	if n, ok := labels.Load(action); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// awaitConverged polls the API server through cfg every 100 ms until
// every ConfigMap is labelled with its ring owner among the alive
// members, and there are want of those; it returns the owners. In a
// synctest bubble, within and the polls are simulated time.
func awaitConverged(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, want int, objects int, within time.Duration) (map[informer.Key]string, []string) {
	t.Helper()
	core := must(testenv.CoreV1Client(cfg))
	deadline := time.Now().Add(within)
	for {
		alive := aliveMembers(ctx, t, cfg, ns)
		cms := listConfigMaps(ctx, t, core, ns)
		if len(alive) == want && len(cms) == objects {
			if owners, ok := converged(cms, alive); ok {
				return owners, alive
			}
		}
		require.True(t, time.Now().Before(deadline), "not converged on %d members within %v", want, within)
		time.Sleep(100 * time.Millisecond)
	}
}

// Parents are created while no member and no sharder runs. Member a
// joins and gets them all; member b joins, and the sharder drains about
// half of them to b. Each moved parent reached a's informer as a delete
// while it still existed — a naive handler would have deleted its child
// — yet every child survives, because sharding.Reconciler never calls the
// reconcile for an object not in the member's cache. No two members ever
// reconcile one key at once. Then b leaves, and its objects return to a.
func TestAJoinDrainsObjectsWithoutOverlapAndTheRelabelReachesTheOldOwnerAsADelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 40
		createParents(ctx, t, core, ns, parents)

		rec := newRecords()
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		started := time.Now()
		startSharder(ctx, t, &wg, cfg, ns, &labels)
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		guard := 30 * time.Second // simulated: the times logged are simulated too
		owners, alive := awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		t.Logf("%d parents and their children assigned to %v within %v of the sharder's start", parents, alive, time.Since(started).Round(time.Millisecond))
		a := alive[0]
		for _, owner := range owners {
			require.Equal(t, a, owner)
		}

		ctxB, stopB := context.WithCancel(ctx)
		defer stopB()
		joined := time.Now()
		wg.Go(func() { runReplica(ctxB, t, cfg, ns, "b", rec) })
		owners, alive = awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)
		t.Logf("the join rebalanced within %v", time.Since(joined).Round(time.Millisecond))
		b := alive[0]
		if b == a {
			b = alive[1]
		}
		moved, children := 0, 0
		rec.mu.Lock()
		for key, owner := range owners {
			switch {
			case owner != b:
			case key.Name[len(key.Name)-5:] != "child":
				moved++
				require.Equal(t, a, rec.vanished[key], "%s moved to b: a's informer saw it deleted", key)
			default:
				children++
			}
		}
		rec.mu.Unlock()
		require.Positive(t, moved)
		require.EqualValues(t, moved+children, count(&labels, "drain"), "every moved parent and child was drained, none moved without a's acknowledgement")
		t.Logf("%d of %d parents moved to b; a's informer saw each as a delete while it still existed", moved, parents)
		require.Len(t, listConfigMaps(ctx, t, core, ns), 2*parents, "no child was deleted for a parent that moved")

		stopB() // b leaves: it releases its Lease, and its objects return to a without a drain
		owners, _ = awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		for _, owner := range owners {
			require.Equal(t, a, owner)
		}
		// b's Lease, released and owning nothing, is deleted by the sharder.
		require.Eventually(t, func() bool {
			return !slices.Contains(leaseNames(ctx, t, cfg, ns), sharding.LeaseName(ring, b))
		}, guard, 100*time.Millisecond, "the Lease of b, gone and owning nothing, is collected")
		requireNoOverlap(t, rec)
	})
}
