package sharding_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// endedCounter counts the sharder's "term ended" warnings, and cancels
// the test's context once there are too many to be anything but a spin.
type endedCounter struct {
	n      atomic.Int64
	cancel context.CancelFunc
}

func (e *endedCounter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "sharder term ended") && e.n.Add(1) == 1000 {
		e.cancel()
	}
	return len(p), nil
}

// Sharder.Run runs the sharder's Elector, which refuses a second Run at
// once ("Run is already running on this Elector"). A second Run of one
// Sharder, while the first runs, took that refusal for a term that ended
// and stood again at once, for ever: a loop that never sleeps, one
// warning per turn, a core burnt until ctx ends. It must fail, or wait,
// never spin.
//
// Passing: within a second of simulated time the two Runs log fewer than
// ten ended terms (the spin logs a thousand, and the test then cancels
// it, without the simulated second ever passing).
func TestASecondRunOfOneSharderDoesNotSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		ended := &endedCounter{cancel: cancel}
		s := must(sharding.NewSharder(sharding.SharderConfig{
			Config: cfg, LeaseClient: must(leaderelection.NewClient(cfg)), LeaseNamespace: ns, Ring: ring,
			Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: ns,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			Logger: slog.New(slog.NewTextHandler(ended, &slog.HandlerOptions{Level: slog.LevelWarn})),
		}))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { s.Run(ctx) })
		synctest.Wait()
		wg.Go(func() { s.Run(ctx) })

		select {
		case <-time.After(time.Second): // simulated
		case <-ctx.Done():
		}
		require.Less(t, ended.n.Load(), int64(10), "a second Run of the Sharder stood again at once after each refusal: it spins")
	})
}
