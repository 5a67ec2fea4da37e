package sharding_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// The elected sharder may not PATCH for a while (a 403 here; an
// admission webhook down is alike), so every key it tries fails. Once it
// may, every key is tried again within a LeaseDuration or so, however
// many failed: a failed key waits its own doubling delay, capped, not a
// turn in one queue-wide bucket of retries (client-go's default limiter
// allows ten a second, which would spread 500 failed keys over 40 s).
func TestKeysThatFailedDuringA403WindowAreRetriedSoonAfterItEnds(t *testing.T) {
	cp, ns, admin, user := sharderUnderRBAC(t, "get", "list", "watch") // no patch yet
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	core := must(testenv.CoreV1Client(admin))
	const parents = 500
	createParents(ctx, t, core, ns, parents)

	logs := &testlog.Buffer{}
	var labels sync.Map
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { runReplica(ctx, t, admin, ns, "a", newRecords()) })
	startSharder(ctx, t, &wg, user, ns, &labels, func(sc *sharding.SharderConfig) {
		sc.LeaseClient = must(leaderelection.NewClient(user))
		sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the sharder's log (%d failed labellings)", strings.Count(logs.String(), "labelling failed"))
		}
	})

	guard := time.Minute // against hanging, not a timing
	require.Eventually(t, func() bool { return strings.Count(logs.String(), "labelling failed") >= parents }, guard, 100*time.Millisecond,
		"every parent's first PATCH was refused")
	require.Zero(t, count(&labels, "assign"), "nothing was labelled while PATCH was forbidden")

	grant(t, admin, ns, "patch", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch"}},
	})
	// Each failed key waits at most LeaseDuration for its next try; then
	// 500 PATCHes at the client's 200 a second, with room for -race on a
	// busy machine. A queue-wide bucket of 10 a second needs 40 s.
	within := leaseDuration + parents/200*time.Second + 8*time.Second
	deadline := time.Now().Add(within)
	for {
		alive := aliveMembers(ctx, t, cp.Config(), ns)
		var labelled []corev1.ConfigMap
		for _, cm := range listConfigMaps(ctx, t, core, ns) {
			if cm.Labels["role"] == "parent" {
				labelled = append(labelled, cm)
			}
		}
		if _, ok := converged(labelled, alive); ok && len(alive) == 1 && len(labelled) == parents {
			t.Logf("all %d parents labelled %v after PATCH was allowed (bound %v)", parents, time.Until(deadline.Add(-within)).Abs().Round(time.Millisecond), within)
			return
		}
		require.True(t, time.Now().Before(deadline), "the parents were not all labelled within %v of PATCH being allowed", within)
		time.Sleep(100 * time.Millisecond)
	}
}
