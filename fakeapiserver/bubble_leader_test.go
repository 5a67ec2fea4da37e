package fakeapiserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// Two candidates for one Lease on the fake, for a simulated minute: the
// first to try leads the whole time, the other never does, and at no
// moment do two lead.
func TestLeaderElectionInABubbleHasExactlyOneLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		mem := fakeapiserver.ServeInMemory(srv)
		defer mem.Close()
		ctx, cancel := context.WithCancel(t.Context())

		var mu sync.Mutex
		leading := map[string]bool{}
		maxLeaders, terms := 0, 0
		var wg sync.WaitGroup
		for i := range 2 {
			id := fmt.Sprintf("candidate-%d", i)
			client, err := leaderelection.NewClient(mem.Config())
			require.NoError(t, err)
			e, err := leaderelection.New(leaderelection.Config{
				Client: client, Namespace: "kube-system", Name: "sim", Identity: id, Logger: quiet,
				Callbacks: leaderelection.Callbacks{
					OnStartedLeading: func(ctx context.Context) {
						mu.Lock()
						leading[id] = true
						terms++
						n := 0
						for _, l := range leading {
							if l {
								n++
							}
						}
						maxLeaders = max(maxLeaders, n)
						mu.Unlock()
						<-ctx.Done()
						mu.Lock()
						leading[id] = false
						mu.Unlock()
					},
					OnStoppedLeading: func() {},
				},
			})
			require.NoError(t, err)
			wg.Go(func() { _ = e.Run(ctx) })
			time.Sleep(time.Second) // candidate-0 tries first
		}
		start := time.Now()
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, map[string]bool{"candidate-0": true}, leading, "candidate-1 never led")
		require.Equal(t, 1, maxLeaders)
		require.Equal(t, 1, terms)
		mu.Unlock()
		leases := srv.Objects(coordinationv1.SchemeGroupVersion.WithResource("leases"))
		require.Len(t, leases, 1)
		holder, _, _ := unstructured.NestedString(leases[0].Object, "spec", "holderIdentity")
		require.Equal(t, "candidate-0", holder)
		t.Logf("simulated time covered: %v", time.Since(start)+time.Second*2)
		cancel()
		wg.Wait()
	})
}
