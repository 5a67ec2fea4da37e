package leaderelection_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
		srv := fakeapiserver.New()
		var cut atomic.Bool
		memA := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(*http.Request) fakeapiserver.Fault {
			if cut.Load() {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		defer memA.Close()
		memB := fakeapiserver.ServeInMemory(srv)
		defer memB.Close()
		quietLog := slog.New(slog.NewTextHandler(io.Discard, nil))

		type term struct {
			fence uint64
			ctx   context.Context
		}
		terms := make(chan term, 4)
		candidate := func(mem *fakeapiserver.InMemory, id string, release bool) *leaderelection.Elector {
			client, err := leaderelection.NewClient(mem.Config())
			require.NoError(t, err)
			e, err := leaderelection.New(leaderelection.Config{
				Client: client, Namespace: "kube-system", Name: "fenced", Identity: id, Logger: quietLog,
				ReleaseOnCancel: release,
				Callbacks: leaderelection.Callbacks{
					OnStartedLeading: func(ctx context.Context) {
						tm, _ := leaderelection.TermOf(ctx)
						terms <- term{tm.Fence, ctx}
						<-ctx.Done()
					},
					OnStoppedLeading: func() {},
				},
			})
			require.NoError(t, err)
			return e
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		a := candidate(memA, "a", false)
		wg.Go(func() { _ = a.Run(ctx) })
		first := <-terms

		time.Sleep(time.Second)
		cut.Store(true) // a's renews fail from now on, for less than its RenewDeadline
		admin, err := leaderelection.NewClient(memB.Config())
		require.NoError(t, err)
		require.NoError(t, admin.Delete().Namespace("kube-system").Resource("leases").Name("fenced").
			Body(&metav1.DeleteOptions{}).Do(ctx).Error())

		bctx, bcancel := context.WithCancel(ctx)
		b := candidate(memB, "b", true)
		bdone := make(chan struct{})
		go func() { defer close(bdone); _ = b.Run(bctx) }()
		second := <-terms
		require.Greater(t, second.fence, first.fence, "the second term's fence")
		time.Sleep(time.Second)
		bcancel() // b stops and releases the Lease
		<-bdone

		cut.Store(false) // a's requests work again, 3 s after they stopped
		time.Sleep(5 * time.Second)
		synctest.Wait()
		leases := srv.Objects(coordinationv1.SchemeGroupVersion.WithResource("leases"))
		require.Len(t, leases, 1)
		holder, _, _ := unstructured.NestedString(leases[0].Object, "spec", "holderIdentity")
		t.Logf("holder now %q; a's term over: %v", holder, first.ctx.Err() != nil)
		require.Error(t, first.ctx.Err(), "a's term goes on after b's term, with the fence %d of its first write, below b's %d",
			first.fence, second.fence)
		require.ErrorIs(t, context.Cause(first.ctx), leaderelection.ErrLost)
		select {
		case again := <-terms: // a may lead again, in a new term
			require.Greater(t, again.fence, second.fence, "a new term's fence is above every earlier term's")
		default:
		}
	})
}
