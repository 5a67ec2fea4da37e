package sharding_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// The elected sharder may not list one of its resources (a 403 here, as
// RBAC answers before a Role allows it; a CRD not yet installed is
// alike). Its sync fails after SyncTimeout; it says so in its log and
// its metric, stops what it started, and tries again with a fresh
// factory, more than once, within its term. Once allowed, it shards.
func TestAnElectedSharderRetriesASyncThatFailedAndShardsOnceItCan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var granted atomic.Bool // the sharder may use Secrets
		secrets := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/secrets") }
		c := newFakeCluster(t, forbidUntilGranted("sharder", secrets, &granted))
		ns, admin, user := c.ns, c.cfg, c.as("sharder")
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 10
		createParents(ctx, t, c.core, ns, parents)

		memory := metrics.NewMemory()
		reg := must(metrics.NewRegistry(memory))
		logs := &testlog.Buffer{}
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		startSharder(ctx, t, &wg, user, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.Resources = append(sc.Resources, corev1.SchemeGroupVersion.WithResource("secrets")) // forbidden
			sc.SyncTimeout, sc.MaxSyncBackoff = 5*time.Second, time.Second                         // simulated: a LIST takes none of it
			sc.Metrics = reg
			sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		})
		wg.Go(func() { runReplica(ctx, t, admin, ns, "a", newRecords()) })

		failures := func() float64 {
			v, _ := memory.Value("listwatch_sharder_sync_failures_total", ring)
			return v
		}
		guard := time.Minute // simulated: many times what this takes
		require.Eventually(t, func() bool { return failures() >= 2 }, guard, 100*time.Millisecond,
			"the sync failed and was tried again; log:\n%s", logs)
		require.Contains(t, logs.String(), "injected fault: 403", "the log names the cause")
		require.Zero(t, count(&labels, "assign"), "nothing was assigned while a resource could not sync")

		granted.Store(true)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the sharder's log:\n%s", logs)
			}
		})
		awaitConverged(ctx, t, admin, ns, 1, 2*parents, guard) // the replica makes a child for each parent
		t.Logf("sharded after %v failed syncs", failures())
	})
}
