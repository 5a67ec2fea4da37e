package leaderelection_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// The leader's requests fail for a few seconds (well within its
// RenewDeadline), and meanwhile its Lease is deleted; a candidate that
// never saw the Lease creates it at once (the one window docs/14 admits),
// leads with a greater fence, and releases the Lease when it stops. When
// the first leader's requests work again, its renew finds the Lease
// free. Taking it and going on would lead with the fence of the write
// that began its term, below the fence of the term that came between,
// and a reader that accepted the second term's writes would refuse the
// current leader's. A Lease that changed hands since the leader's last
// write ends its term: it may lead again only in a new term, with a new
// fence. (Found by an adversarial review, on the fake API server.)
func TestALeaderWhoseLeaseChangedHandsEndsItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second, later, holder := leaseChangedHands(t, false)
		t.Logf("holder now %q; a's term over: %v", holder, first.ctx.Err() != nil)
		require.Error(t, first.ctx.Err(), "a's term goes on after b's term, with the fence %d of its first write, below b's %d",
			first.fence, second.fence)
		require.ErrorIs(t, context.Cause(first.ctx), leaderelection.ErrLost)
		select {
		case again := <-later: // a may lead again, in a new term
			require.Greater(t, again.fence, second.fence, "a new term's fence is above every earlier term's")
		default:
		}
	})
}

// fencedTerm is one term of the Lease kube-system/fenced: its fence and
// its context.
type fencedTerm struct {
	fence uint64
	ctx   context.Context
}

// leaseChangedHands plays, in the caller's bubble, the scene of the
// tests of a Lease that changed hands under its leader. a leads; its
// requests fail (503) from a second on, for 3 s, well within its
// RenewDeadline, and meanwhile its Lease is deleted; b, which never saw
// it, creates it at once, leads with a greater fence, and releases the
// Lease when it stops a second later; if deleteAgain, the Lease is then
// deleted a second time. Then a's requests work again and the bubble
// runs 5 s more. It returns a's first term, b's term, the terms begun
// after them, and the Lease's holder then. Both candidates stop when
// the test ends.
func leaseChangedHands(t *testing.T, deleteAgain bool) (first, second fencedTerm, later <-chan fencedTerm, holder string) {
	t.Helper()
	sd := newSides(t, fakeapiserver.Fault{Status: http.StatusServiceUnavailable}, fakeapiserver.Fault{})
	quietLog := slog.New(slog.NewTextHandler(io.Discard, nil))
	terms := make(chan fencedTerm, 4)
	candidate := func(mem *fakeapiserver.InMemory, id string, release bool) *leaderelection.Elector {
		e, err := leaderelection.New(leaderelection.Config{
			Client: must(leaderelection.NewClient(mem.Config())), Namespace: "kube-system", Name: "fenced", Identity: id,
			Logger: quietLog, ReleaseOnCancel: release,
			Callbacks: leaderelection.Callbacks{
				OnStartedLeading: func(ctx context.Context) {
					tm, _ := leaderelection.TermOf(ctx)
					terms <- fencedTerm{tm.Fence, ctx}
					<-ctx.Done()
				},
				OnStoppedLeading: func() {},
			},
		})
		require.NoError(t, err)
		return e
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	t.Cleanup(cancel) // runs first

	wg.Go(func() { _ = candidate(sd.a, "a", false).Run(ctx) })
	first = <-terms

	time.Sleep(time.Second)
	sd.aFaulty.Store(true) // a's renews fail from now on, for less than its RenewDeadline
	deleteLease(ctx, t, sd.admin, "fenced")
	bctx, bcancel := context.WithCancel(ctx)
	bdone := make(chan struct{})
	go func() { defer close(bdone); _ = candidate(sd.b, "b", true).Run(bctx) }()
	second = <-terms
	require.Greater(t, second.fence, first.fence, "the second term's fence")
	time.Sleep(time.Second)
	bcancel() // b stops and releases the Lease
	<-bdone
	if deleteAgain {
		deleteLease(ctx, t, sd.admin, "fenced") // nothing is left of b's term
	}

	sd.aFaulty.Store(false) // a's requests work again, 3 s after they stopped
	time.Sleep(5 * time.Second)
	synctest.Wait()
	lease := getLease(ctx, t, sd.admin.Config(), "kube-system", "fenced")
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	return first, second, terms, holder
}
