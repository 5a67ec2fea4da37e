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

// The one order docs/14 leaves beyond any fence: as in
// TestALeaderWhoseLeaseChangedHandsEndsItsTerm, a's Lease is deleted
// while a's requests fail, b (which never saw it) creates it, leads with
// a greater fence and releases it; then the Lease is deleted a second
// time, before a's requests work again. No write is left to show that
// b's term came between: a's renew finds the Lease absent, puts it back,
// and a goes on leading with the fence of its first write, below b's. A
// reader that accepted b's fence refuses the current leader's writes.
func TestALeaderWhoseLeaseIsDeletedAgainAfterAnotherTermGoesOnWithItsLowerFence(t *testing.T) {
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
			e, err := leaderelection.New(leaderelection.Config{
				Client: must(leaderelection.NewClient(mem.Config())), Namespace: "kube-system", Name: "fenced", Identity: id,
				Logger: quietLog, ReleaseOnCancel: release,
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
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		admin := must(leaderelection.NewClient(memB.Config()))
		deleteLease := func() {
			require.NoError(t, admin.Delete().Namespace("kube-system").Resource("leases").Name("fenced").
				Body(&metav1.DeleteOptions{}).Do(ctx).Error())
		}

		a := candidate(memA, "a", false)
		wg.Go(func() { _ = a.Run(ctx) })
		first := <-terms

		time.Sleep(time.Second)
		cut.Store(true) // a's renews fail from now on, for less than its RenewDeadline
		deleteLease()
		bctx, bcancel := context.WithCancel(ctx)
		bdone := make(chan struct{})
		go func() { defer close(bdone); _ = candidate(memB, "b", true).Run(bctx) }()
		second := <-terms
		require.Greater(t, second.fence, first.fence, "the second term's fence")
		time.Sleep(time.Second)
		bcancel() // b stops and releases the Lease
		<-bdone
		deleteLease() // a second time: nothing is left of b's term

		cut.Store(false) // a's requests work again, 3 s after they stopped
		time.Sleep(5 * time.Second)
		synctest.Wait()
		leases := srv.Objects(coordinationv1.SchemeGroupVersion.WithResource("leases"))
		require.Len(t, leases, 1)
		holder, _, _ := unstructured.NestedString(leases[0].Object, "spec", "holderIdentity")
		require.Equal(t, "a", holder, "a put the Lease back")
		require.NoError(t, first.ctx.Err(), "a's term goes on")
		require.Less(t, first.fence, second.fence, "with the fence of its first write, below the fence of b's term, which came between")
	})
}
