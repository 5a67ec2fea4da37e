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

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/sharding"
)

// The elected sharder may not PATCH for a while (a 403 here, as RBAC
// answers before a Role allows it; an admission webhook down is alike),
// so every key it tries fails. Once it may, every key is tried again
// within a LeaseDuration or so, however many failed: a failed key waits
// its own doubling delay, capped, not a turn in one queue-wide bucket of
// retries (client-go's default limiter allows ten a second, which would
// spread 500 failed keys over 40 s).
func TestKeysThatFailedDuringA403WindowAreRetriedSoonAfterItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var granted atomic.Bool // the sharder may PATCH
		patches := func(r *http.Request) bool { return r.Method == http.MethodPatch }
		c := newFakeCluster(t, forbidUntilGranted("sharder", patches, &granted))
		ns, admin, user := c.ns, c.cfg, c.as("sharder")
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 500
		createParents(ctx, t, c.core, ns, parents)

		logs := &testlog.Buffer{}
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		startMembers(ctx, t, &wg, admin, ns, []string{"a"}, nil) // idle: the sharder's retries are the subject
		startSharder(ctx, t, &wg, user, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		})
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the sharder's log (%d failed labellings)", strings.Count(logs.String(), "labelling failed"))
			}
		})

		guard := time.Minute // simulated: many times what this takes
		require.Eventually(t, func() bool { return strings.Count(logs.String(), "labelling failed") >= parents }, guard, 100*time.Millisecond,
			"every parent's first PATCH was refused")
		require.Zero(t, count(&labels, "assign"), "nothing was labelled while PATCH was forbidden")

		granted.Store(true)
		// Each failed key waits at most LeaseDuration for its next try; then
		// 500 PATCHes at the client's 200 a second (simulated time: the
		// machine's load does not stretch it). A queue-wide bucket of 10 a
		// second needs 40 s.
		within := leaseDuration + parents/200*time.Second + time.Second
		allowed := time.Now()
		for count(&labels, "assign") < parents {
			require.Less(t, time.Since(allowed), within, "the parents were not all labelled within %v of PATCH being allowed", within)
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("all %d parents labelled %v after PATCH was allowed (bound %v)", parents, time.Since(allowed), within)
		alive := aliveMembers(ctx, t, admin, ns)
		_, ok := converged(listConfigMaps(ctx, t, c.core, ns), alive)
		require.True(t, ok && len(alive) == 1, "every parent is labelled with the one member, %v, on the server", alive)
	})
}
