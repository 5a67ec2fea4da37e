package sharding_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// A member that stops renewing drops off the sharder's ring when its
// Lease has gone unchanged for a lease duration; its objects then wait,
// "not seen alive", for the sharder to take its Lease over. If the
// member's own release lands first (sent before a stall and served late,
// as a recovering server serves what it held), the takeover fails with
// 409, and the next poll finds the Lease released: the member is dead
// for certain, though no takeover was written and the ring did not
// change. Its objects must still move. Found by the simulator (seed 827
// of the sharded scenario: a member's release held by a hang).
func TestAMemberReleasedAfterItWasJudgedExpiredHasItsObjectsMoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := fakeapiserver.New()
		scene := newTakeoverScene()
		var releasedFirst atomic.Bool
		tookOver := make(chan struct{})
		var once sync.Once
		var mem *fakeapiserver.InMemory
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, answered := scene.fromX(w, r) // once cut, x can neither renew nor release
			if answered {
				return
			}
			id := scene.x()
			if !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+sharding.LeaseName(ring, id)) &&
				r.UserAgent() != "late-release" {
				once.Do(func() {
					// x's release, held since before the cut, lands just
					// before the sharder's takeover.
					releaseLease(r.Context(), t, mem, sharding.LeaseName(ring, id))
					releasedFirst.Store(true)
					scene.afterTakeover.Store(true)
					close(tookOver)
				})
			}
			srv.ServeHTTP(w, r)
		})
		mem = fakeapiserver.ServeInMemory(handler)
		t.Cleanup(mem.Close)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		scene.start(ctx, t, &wg, mem)
		scene.cutX(t, tookOver, 4*leaseDuration) // then four lease durations for the objects to move
		require.True(t, releasedFirst.Load(), "x's release did not land before the takeover: the test proves nothing")
		scene.requireNothingTowardX(t, "released")
		requireMovedOffX(ctx, t, scene, mem, "released")
	})
}

// The same wait, by another route: the sharder's takeover is applied but
// its answer is lost (the request times out on the sharder's side), so
// takeOverSuspects reports nothing written, and the next poll finds the
// Lease held by the sharder: x is dead for certain, no takeover was
// reported, and the ring did not change. The takeover's first attempt
// fails at once, in the pass that saw x leave the ring, so that pass's
// enqueue of every key comes before x is dead for certain. Found by the
// review.
func TestAMemberTakenOverByATakeoverWhoseAnswerWasLostHasItsObjectsMoved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := fakeapiserver.New()
		scene := newTakeoverScene()
		tookOver := make(chan struct{})
		var lost atomic.Bool
		var puts atomic.Int32
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, answered := scene.fromX(w, r)
			if answered {
				return
			}
			id := scene.x()
			if !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+sharding.LeaseName(ring, id)) && !lost.Load() {
				if puts.Add(1) == 1 {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				srv.ServeHTTP(httptest.NewRecorder(), r) // applied ...
				lost.Store(true)
				scene.afterTakeover.Store(true)
				close(tookOver)
				<-r.Context().Done() // ... but the sharder's request times out first
				return
			}
			srv.ServeHTTP(w, r)
		})
		mem := fakeapiserver.ServeInMemory(handler)
		t.Cleanup(mem.Close)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		scene.start(ctx, t, &wg, mem)
		scene.cutX(t, tookOver, 4*leaseDuration)
		require.True(t, lost.Load(), "no takeover's answer was lost: the test proves nothing")
		scene.requireNothingTowardX(t, "taken over")
		requireMovedOffX(ctx, t, scene, mem, "taken over")
	})
}

// requireMovedOffX fails unless every ConfigMap is labelled, and none
// with x: x's objects moved once it was dead for certain.
func requireMovedOffX(ctx context.Context, t *testing.T, scene *takeoverScene, mem *fakeapiserver.InMemory, how string) {
	admin := must(testenv.CoreV1Client(mem.Config()))
	label := sharding.Shard{Ring: ring}.Label()
	for _, cm := range listConfigMaps(ctx, t, admin, "default") {
		require.NotEqual(t, scene.x(), cm.Labels[label], "%s is still labelled with x, %s %v ago", cm.Name, how, 4*leaseDuration)
		require.NotEmpty(t, cm.Labels[label], "%s lost its label", cm.Name)
	}
}

// releaseLease releases a Lease as its holder does (no holder, a
// duration of one second), through a client whose requests the test's
// handler lets through.
func releaseLease(ctx context.Context, t *testing.T, mem *fakeapiserver.InMemory, name string) {
	cfg := mem.Config()
	cfg.UserAgent = "late-release"
	leases := must(leaderelection.NewClient(cfg))
	var lease coordinationv1.Lease
	require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name(name).Do(ctx).Into(&lease))
	one := int32(1)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = nil, &one
	require.NoError(t, leases.Put().Namespace("default").Resource("leases").Name(name).Body(&lease).Do(ctx).Error())
}
