package leaderelection_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// OnNewLeader "is called when the holder this candidate observes
// changes, this candidate included; "" means the Lease was released". A
// leader that releases the Lease (ReleaseOnCancel) makes and sees that
// change itself, yet is never told: its last OnNewLeader named itself,
// and a caller that tracks the leader by it (to forward requests to the
// leader, say) still believes this candidate leads once Run returned.
// Run returns after OnNewLeader's last call, so that call is "".
func TestALeaderThatReleasesTheLeaseIsToldItWasReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		var mu sync.Mutex
		var seen []string
		leading := make(chan struct{}, 1)
		cfg, _ := config(t, mem.Config(), "kube-system", "told", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
			OnNewLeader: func(id string) {
				mu.Lock()
				seen = append(seen, id)
				mu.Unlock()
			},
		})
		cfg.ReleaseOnCancel = true
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		<-leading
		cancel()
		require.NoError(t, <-done, "the release landed")
		require.Nil(t, getLease(t.Context(), t, mem.Config(), "kube-system", "told").Spec.HolderIdentity)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{"leader", ""}, seen, "OnNewLeader's calls, the last once Run returned")
	})
}
