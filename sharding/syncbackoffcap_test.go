package sharding_test

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/sharding"
)

// SharderConfig.MaxSyncBackoff "caps the wait between two sync
// attempts". The backoff began at RetryPeriod whatever the cap, so a cap
// below RetryPeriod was passed by the first wait (then the waits shrank
// to the cap: a backoff that falls).
//
// Passing: no wait between two sync attempts exceeds MaxSyncBackoff.
func TestNoWaitBetweenTwoSyncAttemptsExceedsMaxSyncBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var granted atomic.Bool
		secrets := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/secrets") }
		c := newFakeCluster(t, forbidUntilGranted("sharder", secrets, &granted))
		ctx, cancel := context.WithCancel(t.Context())
		logs := &testlog.Buffer{}
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		const maxBackoff = 200 * time.Millisecond // below retryPeriod
		startSharder(ctx, t, &wg, c.as("sharder"), c.ns, &labels, func(sc *sharding.SharderConfig) {
			sc.Resources = append(sc.Resources, corev1.SchemeGroupVersion.WithResource("secrets")) // forbidden: every sync fails
			sc.SyncTimeout, sc.MaxSyncBackoff = time.Second, maxBackoff
			sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		})
		startMembers(ctx, t, &wg, c.cfg, c.ns, []string{"a"}, nil) // someone alive, so the sharder shards

		waits := regexp.MustCompile(`sharding failed; retrying.* in=(\S+)`)
		require.Eventually(t, func() bool { return len(waits.FindAllStringSubmatch(logs.String(), -1)) >= 3 },
			time.Minute, 100*time.Millisecond, "three sync attempts failed; log:\n%s", logs)
		for _, m := range waits.FindAllStringSubmatch(logs.String(), -1) {
			wait := must(time.ParseDuration(m[1]))
			require.LessOrEqual(t, wait, maxBackoff, "a wait between two sync attempts passed MaxSyncBackoff (RetryPeriod %v)", retryPeriod)
		}
	})
}
