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

// leaseDeletedOnTheWayOut runs a candidate with ReleaseOnCancel until it
// leads, deletes its Lease (an admin, a cleanup) and ends its context
// before the next renew can see the Lease gone, so that the release
// meets the delete. It returns every identity OnNewLeader was told, in
// order, and Run's error. Call it in a synctest bubble.
func leaseDeletedOnTheWayOut(t *testing.T) ([]string, error) {
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
			defer mu.Unlock()
			seen = append(seen, id)
		},
	})
	cfg.ReleaseOnCancel = true
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
	<-leading
	require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("deleted").Do(t.Context()).Error())
	stop()
	err := <-done // Run returns after OnNewLeader's last call
	mu.Lock()
	defer mu.Unlock()
	return seen, err
}

// TestAReleaseThatFindsTheLeaseDeletedIsNoError: a leader's Lease is
// deleted just before its context ends. The release has nothing left to
// give up: nobody holds a Lease that does not exist (the standbys that
// see it gone still wait a LeaseDuration: they cannot know who deleted
// it). So Run returns nil, as for a release that landed. It returned the
// release's 404 (or the 404 of the read after its 409), as if the Lease
// were still held. Found by our own hunt.
func TestAReleaseThatFindsTheLeaseDeletedIsNoError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := leaseDeletedOnTheWayOut(t)
		require.NoError(t, err, "the Lease was gone: there was nothing to release")
	})
}

// TestALeaderWhoseReleaseFindsTheLeaseDeletedIsNotLeftNamedLeader: a
// leader that releases the Lease tells OnNewLeader "" last, so that a
// caller tracking the leader by it (to forward requests to the leader)
// does not go on believing this candidate leads once Run returned; so
// does one whose release found the Lease deleted. (Found by a review of
// the fix above, which recorded the Lease as held by someone unknown,
// which OnNewLeader is never told: its last call still named the leader.)
func TestALeaderWhoseReleaseFindsTheLeaseDeletedIsNotLeftNamedLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		seen, err := leaseDeletedOnTheWayOut(t)
		require.NoError(t, err)
		require.NotEmpty(t, seen)
		require.Equal(t, "", seen[len(seen)-1], "Run returned, holding nothing, yet OnNewLeader's last call (of %v) names a leader", seen)
	})
}
