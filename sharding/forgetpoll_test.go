package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// TestAPollAnsweredBeforeATakeoverDoesNotBringTheMemberBack, with one
// step more: between the takeover and the stale poll's answer, the
// sharder's Lease collection deletes the Lease of the member taken over
// (it owns nothing once its objects moved) and forgets it. forget drops
// the takeover's write stamp with the observation, so the poll sent
// before the takeover is recorded as if it were news: the member, dead
// for certain and its Lease gone, is alive again for a lease, and
// objects are drained toward it. A ghost member's Lease, released and
// whose delete the server refuses, shows when the sharder collects; the
// takeover is refused until a collection is due soon, so that it falls
// within the stale poll's timeout.
func TestAPollAnsweredBeforeATakeoverAndItsCollectionDoesNotBringTheMemberBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := fakeapiserver.New()
		scene := newTakeoverScene()
		var lastCollect atomic.Int64 // when the sharder last tried to delete the ghost's Lease
		var held heldPoll
		tookOver := make(chan struct{})
		xDeleted := make(chan struct{})
		var tookOnce, delOnce sync.Once
		var forgotFirst atomic.Bool
		ghostLease := sharding.LeaseName(ring, "ghost")
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, answered := scene.fromX(w, r)
			if answered {
				return
			}
			if r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, "/leases/"+ghostLease) {
				lastCollect.Store(time.Now().UnixNano())
				http.Error(w, "refused", http.StatusInternalServerError) // the ghost stays, and shows every collection
				return
			}
			id := scene.x()
			xLease := "/leases/" + sharding.LeaseName(ring, id)
			if !x && id != "" && r.Method == http.MethodDelete && strings.HasSuffix(r.URL.Path, xLease) {
				srv.ServeHTTP(w, r) // the collection of x's Lease: then forget
				delOnce.Do(func() { close(xDeleted) })
				return
			}
			if !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, xLease) {
				// The takeover: refused until the next collection is less
				// than a second away, then held for the next poll.
				last := lastCollect.Load()
				if last == 0 || time.Since(time.Unix(0, last)) < 3*time.Second {
					http.Error(w, "not yet", http.StatusServiceUnavailable)
					return
				}
				held.write(w, r, srv)
				tookOnce.Do(func() { scene.afterTakeover.Store(true); close(tookOver) })
				return
			}
			if held.poll(w, r, srv, func() {
				select { // within the poll's 1.5 s timeout
				case <-xDeleted:
					time.Sleep(10 * time.Millisecond) // the sharder forgets x
					forgotFirst.Store(true)
				case <-time.After(1300 * time.Millisecond):
				}
			}) {
				return
			}
			srv.ServeHTTP(w, r)
		})
		mem := fakeapiserver.ServeInMemory(handler)
		t.Cleanup(mem.Close)
		leases := must(leaderelection.NewClient(mem.Config()))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		seconds := int32(4)
		require.NoError(t, leases.Post().Namespace("default").Resource("leases").Body(&coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: ghostLease,
				Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: "ghost"}},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &seconds}, // released: dead for certain, owns nothing
		}).Do(ctx).Error())

		scene.start(ctx, t, &wg, mem)
		scene.cutX(t, tookOver, 6*leaseDuration) // x stops renewing, and cannot release: the sharder takes its Lease over
		require.True(t, held.heldBack.Load(), "no poll was answered from before the takeover: the test proves nothing")
		require.True(t, forgotFirst.Load(), "x's Lease was not collected before the stale poll's answer: the test proves nothing")
		scene.requireNothingTowardX(t, "taken over, collected and forgotten")
	})
}
