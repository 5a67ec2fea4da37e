package leaderelection_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// TestAReleaseThatFindsTheLeaseDeletedIsNoError: a leader's Lease is
// deleted (by an admin, a cleanup) just before its context ends. The
// release has nothing left to give up: nobody holds a Lease that does not
// exist, and the next leader creates it without waiting. So Run returns
// nil, as for a release that landed. It returned the release's 404 (or
// the 404 of the read after its 409), as if the Lease were still held.
func TestAReleaseThatFindsTheLeaseDeletedIsNoError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		leases := must(leaderelection.NewClient(mem.Config()))
		ts := newTerms()
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		cfg, _ := config(t, mem.Config(), "default", "deleted", "leaving", ts.callbacks("leaving", nil))
		cfg.ReleaseOnCancel = true
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		awaitTerm(t, ts, takeoverBound+time.Minute, "the candidate leads")

		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("deleted").Do(t.Context()).Error())
		stop() // before the next renew can see it gone
		require.NoError(t, <-done, "the Lease was gone: there was nothing to release")
	})
}
