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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// A takeover is guarded by the version the sharder judged expired, not
// by whatever it saw last. Two members' Leases look expired, so the
// sharder judges both and takes them over in turn. The first takeover
// hangs until its timeout; meanwhile the second member renews, and a
// poll records the renewed version. The second takeover must then fail
// with 409: the member renewed after it was judged, so it is alive and
// keeps its Lease. Written with its renewed version instead, the
// takeover would succeed, and the objects of a member that still
// reconciles would move.
func TestAMemberThatRenewsWhileAnotherTakeoverHangsIsNotTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		// Two member Leases that nobody renews: the sharder judges both
		// expired, "dead-1" first (suspects are taken over in id order).
		leases := must(leaderelection.NewClient(cfg))
		const hangs, renews = "dead-1", "renews-2"
		for _, id := range []string{hangs, renews} {
			createMemberLease(ctx, t, leases, ns, id)
		}

		gate := &takeoverGate{hang: sharding.LeaseName(ring, hangs), watch: sharding.LeaseName(ring, renews),
			held: make(chan struct{}), release: make(chan struct{}), recorded: make(chan struct{}), status: make(chan int, 1), stop: ctx.Done()}
		gated := rest.CopyConfig(cfg)
		gated.Wrap(func(rt http.RoundTripper) http.RoundTripper { gate.next = rt; return gate })
		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.LeaseClient = must(leaderelection.NewClient(gated))
		})

		guard := time.Minute // simulated: many times what this takes
		receive(t, gate.held, guard)
		// The first takeover hangs: the second member renews now, after
		// both were judged, and the sharder's poll records the new version.
		renew(ctx, t, leases, ns, renews)
		gate.renewed.Store(true)
		receive(t, gate.recorded, guard)
		close(gate.release) // the hanging takeover ends at its timeout

		status := receive(t, gate.status, guard)
		require.Equal(t, http.StatusConflict, status,
			"the takeover of %s, which renewed after it was judged expired, was answered %d: it must fail with 409", renews, status)
		lease := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace(ns).Resource("leases").Name(sharding.LeaseName(ring, renews)).Do(ctx).Into(lease))
		require.Equal(t, renews, *lease.Spec.HolderIdentity, "the member that renewed keeps its Lease")
	})
}

// takeoverGate wraps the sharder's Lease client. It holds the takeover
// (PUT) of Lease hang until release is closed and the request's own
// timeout has ended it; it closes recorded once a poll that began after
// renewed was set has finished (the next poll began: polls run one at a
// time), and sends the status of the first PUT of Lease watch.
type takeoverGate struct {
	next        http.RoundTripper
	hang, watch string
	renewed     atomic.Bool

	held, release, recorded chan struct{}
	stop                    <-chan struct{} // the test's end
	status                  chan int
	heldOnce, recordOnce    sync.Once
	statusOnce              sync.Once
	polls                   atomic.Int32 // polls begun after renewed
}

func (g *takeoverGate) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/leases/"+g.hang):
		g.heldOnce.Do(func() { close(g.held) })
		select {
		case <-g.release:
		case <-g.stop: // the test ended early
		}
		<-req.Context().Done()
		return nil, req.Context().Err()
	case req.Method == http.MethodGet && req.URL.Query().Has("labelSelector") && g.renewed.Load():
		if g.polls.Add(1) == 2 {
			g.recordOnce.Do(func() { close(g.recorded) })
		}
	case req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/leases/"+g.watch):
		resp, err := g.next.RoundTrip(req)
		if err == nil {
			g.statusOnce.Do(func() { g.status <- resp.StatusCode })
		}
		return resp, err
	}
	return g.next.RoundTrip(req)
}

// createMemberLease creates member id's shard Lease in ring, held by id
// with a 1 s duration, as a member would, and never renews it.
func createMemberLease(ctx context.Context, t *testing.T, leases *rest.RESTClient, ns, id string) {
	t.Helper()
	createMemberLeaseFor(ctx, t, leases, ns, id, 1)
}

// createMemberLeaseFor is createMemberLease with a duration of seconds.
func createMemberLeaseFor(ctx context.Context, t *testing.T, leases *rest.RESTClient, ns, id string, seconds int32) {
	t.Helper()
	holder, now := id, metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: sharding.LeaseName(ring, id), Namespace: ns,
			Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
	}
	require.NoError(t, leases.Post().Namespace(ns).Resource("leases").Body(lease).Do(ctx).Error())
}

// createOwnedBy creates a ConfigMap in ns labelled for member id: an
// object to move, without which a member whose Lease is deleted is
// forgotten rather than taken over.
func createOwnedBy(ctx context.Context, t *testing.T, cfg *rest.Config, ns, id string) {
	t.Helper()
	shard := sharding.Shard{Ring: ring}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owned-by-" + id,
		Labels: map[string]string{shard.Label(): id}}}
	require.NoError(t, must(testenv.CoreV1Client(cfg)).Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error())
}

// renew renews member id's shard Lease once, as its member would.
func renew(ctx context.Context, t *testing.T, leases *rest.RESTClient, ns, id string) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	require.NoError(t, leases.Get().Namespace(ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Into(lease))
	now := metav1.NewMicroTime(time.Now())
	lease.Spec.RenewTime = &now
	require.NoError(t, leases.Put().Namespace(ns).Resource("leases").Name(lease.Name).Body(lease).Do(ctx).Error())
}
