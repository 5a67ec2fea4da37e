package sharding_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// Two members' Leases are deleted at once; both are judged absent in
// one pass. "a" owns an object, so the sharder takes it over first (a
// create, which hangs: the server never answers creates of a's Lease).
// "b" owns nothing when the pass begins, so it is to be forgotten, but
// only after a's create gives up, and meanwhile an object labelled for
// b reaches the sharder's cache. Its decide runs while b is still
// tracked, so its track does nothing. Were b forgotten on the pass's
// first read of the caches, nothing would track b again nor enqueue the
// object: b's Lease never taken over, its object never moved, for as
// long as no other member changed (found by a review). Passing: b's
// Lease is taken over and the object moves to the live member.
func TestAnObjectThatNamesAMemberSeenWhileAnotherTakeoverHangsIsNotStrandedByItsForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hangs, forgotten = "a", "b"
		var creates sync.Map // lease name -> *atomic.Int64: creates sent by anyone but the test
		var byTest atomic.Bool
		hanging := make(chan struct{}, 1)
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/leases") || byTest.Load() {
				return fakeapiserver.Fault{}
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			for _, id := range []string{hangs, forgotten} {
				if bytes.Contains(body, []byte(sharding.LeaseName(ring, id))) {
					n, _ := creates.LoadOrStore(id, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
					if id == hangs {
						select {
						case hanging <- struct{}{}:
						default:
						}
						return fakeapiserver.Fault{Hang: true}
					}
				}
			}
			return fakeapiserver.Fault{}
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(c.cfg))
		// a and b hold Leases of 30 s that the test renews: alive until it
		// deletes them, and judged absent 30 s after that.
		byTest.Store(true)
		for _, id := range []string{hangs, forgotten} {
			holder, seconds, now := id, int32(30), metav1.NewMicroTime(time.Now())
			require.NoError(t, leases.Post().Namespace(c.ns).Resource("leases").Body(&coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: sharding.LeaseName(ring, id), Namespace: c.ns,
					Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
			}).Do(ctx).Error())
		}
		createOwnedBy(ctx, t, c.cfg, c.ns, hangs)
		live := startMembers(ctx, t, &wg, c.cfg, c.ns, []string{"z"}, nil)[0]
		byTest.Store(false)
		startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{})
		for range 8 { // elected, judged (30 s), sharding; a and b renewed, alive
			time.Sleep(5 * time.Second)
			for _, id := range []string{hangs, forgotten} {
				renew(ctx, t, leases, c.ns, id)
			}
		}

		for _, id := range []string{hangs, forgotten} { // one instant: one poll finds both gone
			require.NoError(t, leases.Delete().Namespace(c.ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Error())
		}
		receive(t, hanging, 2*time.Minute) // both judged absent; a's takeover hangs, b waits its turn
		createOwnedBy(ctx, t, c.cfg, c.ns, forgotten)

		time.Sleep(10 * leaseDuration)
		var cm corev1.ConfigMap
		require.NoError(t, c.core.Get().Namespace(c.ns).Resource("configmaps").Name("owned-by-"+forgotten).Do(ctx).Into(&cm))
		var taken int64
		if n, ok := creates.Load(forgotten); ok {
			taken = n.(*atomic.Int64).Load()
		}
		shard := sharding.Shard{Ring: ring}
		require.Equal(t, live, cm.Labels[shard.Label()],
			"the object labelled for %s, which the sharder saw while it judged %s, is stranded: %s forgotten after it appeared, its Lease never taken over (%d creates), the object never moved",
			forgotten, forgotten, forgotten, taken)
	})
}
