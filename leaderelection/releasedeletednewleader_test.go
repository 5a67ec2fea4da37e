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

// Found by a review of 97c6801: aa0c637 makes a leader that releases the Lease tell
// OnNewLeader "" last, so that a caller tracking the leader by it (to
// forward requests to the leader) does not go on believing this
// candidate leads once Run returned. 97c6801 makes a release that finds
// the Lease deleted a success ("nobody holds a Lease that is gone"), and
// Run returns nil, as for a release that landed; but that release records
// the Lease as heldByUnknown, which reportLeader never reports, so
// OnNewLeader's last call still names this candidate after Run returned.
//
// Passing: once Run has returned nil from a release that found the Lease
// deleted, OnNewLeader's last call does not name this candidate.
func TestALeaderWhoseReleaseFindsTheLeaseDeletedIsNotLeftNamedLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		leases := must(leaderelection.NewClient(mem.Config()))
		var mu sync.Mutex
		var seen []string
		leading := make(chan struct{}, 1)
		cfg, _ := config(t, mem.Config(), "default", "deleted", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
			OnNewLeader: func(id string) {
				mu.Lock()
				seen = append(seen, id)
				mu.Unlock()
			},
		})
		cfg.ReleaseOnCancel = true
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		<-leading
		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("deleted").Do(t.Context()).Error())
		stop() // before the next renew can see it gone
		require.NoError(t, <-done, "the Lease was gone: nothing to release")
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, seen)
		require.NotEqual(t, "leader", seen[len(seen)-1], "Run returned, holding nothing, yet OnNewLeader's last call (of %v) still names this candidate", seen)
	})
}
