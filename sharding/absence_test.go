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
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// The sharder sees a member's Lease, then its polls fail for a while;
// meanwhile the member renews, and then someone deletes its Lease. The
// member's term runs until its last renew plus its renew deadline, which
// the sharder cannot know: judged from its last sight, the absent Lease
// would be expired at once, and taken over (created, with no version to
// guard it) while the member still reconciles. Absence is judged from
// when the sharder first saw the Lease gone: the delete came after the
// member's last renew. So the takeover comes a lease duration after
// that first sight at the earliest.
func TestADeletedMemberLeaseIsWaitedOutFromWhenTheSharderFirstSawItGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		leases := must(leaderelection.NewClient(cfg))
		const id = "renews"
		createMemberLease(ctx, t, leases, ns, id) // held by id for 1 s
		createOwnedBy(ctx, t, cfg, ns, id)
		gate := &pollGate{seen: make(chan struct{}), released: make(chan struct{}), taken: make(chan time.Time, 1), stop: ctx.Done()}
		gated := rest.CopyConfig(cfg)
		gated.Wrap(func(rt http.RoundTripper) http.RoundTripper { gate.next = rt; return gate })
		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.LeaseClient = must(leaderelection.NewClient(gated))
		})

		guard := time.Minute         // simulated: many times what this takes
		receive(t, gate.seen, guard) // the sharder has seen the Lease; its polls hang from now on
		// The member renews, unseen, for longer than its lease duration and
		// than the sharder's own wait before it judges anyone (LeaseDuration).
		for range int(2 * leaseDuration / (500 * time.Millisecond)) {
			time.Sleep(500 * time.Millisecond)
			renew(ctx, t, leases, ns, id)
		}
		require.NoError(t, leases.Delete().Namespace(ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Error())
		gate.releasedAt.Store(time.Now().UnixNano())
		close(gate.released) // the next poll finds the Lease gone

		taken := receive(t, gate.taken, guard)
		waited := taken.Sub(time.Unix(0, gate.releasedAt.Load()))
		t.Logf("taken over %v after the sharder first saw the Lease gone", waited)
		require.GreaterOrEqual(t, waited, time.Second,
			"the sharder took over the deleted Lease %v after it first saw it gone, judged from a sight older than the member's last renew", waited)
	})
}

// pollGate wraps the sharder's Lease client: once a poll has listed the
// ring's Leases, later polls wait until released (or their own timeout);
// it sends the time of the first create after the release: the takeover
// of the absent Lease.
type pollGate struct {
	next       http.RoundTripper
	seen       chan struct{}
	released   chan struct{}
	releasedAt atomic.Int64
	taken      chan time.Time
	stop       <-chan struct{}
	seenOnce   sync.Once
	takenOnce  sync.Once
	polled     atomic.Bool
}

func (g *pollGate) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodGet && req.URL.Query().Has("labelSelector"):
		if g.polled.Swap(true) {
			select {
			case <-g.released:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-g.stop:
				return nil, context.Canceled
			}
		}
		resp, err := g.next.RoundTrip(req)
		g.seenOnce.Do(func() { close(g.seen) })
		return resp, err
	case req.Method == http.MethodPost && g.releasedAt.Load() != 0: // not the sharder's own election Lease
		g.takenOnce.Do(func() { g.taken <- time.Now() })
	}
	return g.next.RoundTrip(req)
}

// The sharder sees a member's Lease deleted, then its polls fail for a
// while. Meanwhile the member puts the Lease back and renews, until
// someone deletes it again and the member stops. When the polls work
// again the Lease is absent, as the sharder last saw it, but its first
// sight of the absence no longer bounds the member's last renew: the
// wait starts afresh from the poll that finds it absent again, so the
// takeover comes at least the Lease's duration after the second delete.
// (The same as leaderelection's
// TestAStandbyThatMissedTheLeasesReturnWaitsOutASecondDelete.)
func TestAMemberLeaseDeletedAgainWhileThePollsFailedIsWaitedOutAfresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var pollsFail, deletedTwice atomic.Bool
		taken := make(chan time.Time, 1) // the first takeover (a create) after the second delete
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case pollsFail.Load() && r.Method == http.MethodGet && r.URL.Query().Has("labelSelector"):
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			case deletedTwice.Load() && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases"):
				select {
				case taken <- time.Now():
				default:
				}
			}
			return fakeapiserver.Fault{}
		}))
		defer net.Close()
		admin := fakeapiserver.ServeInMemory(srv)
		defer admin.Close()
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		const ns, id = "default", "renews"
		leases := must(leaderelection.NewClient(admin.Config()))
		renewFor := func(d time.Duration) {
			for range int(d / retryPeriod) {
				time.Sleep(retryPeriod)
				renew(ctx, t, leases, ns, id)
			}
		}
		del := func() {
			require.NoError(t, leases.Delete().Namespace(ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Error())
		}
		createMemberLease(ctx, t, leases, ns, id) // held by id for 1 s
		createOwnedBy(ctx, t, admin.Config(), ns, id)
		var labels sync.Map
		startSharder(ctx, t, &wg, net.Config(), ns, &labels)
		renewFor(2 * leaseDuration) // the sharder is elected and judges the member alive

		del()                                     // the first delete
		time.Sleep(2 * retryPeriod)               // a poll sees the Lease gone
		pollsFail.Store(true)                     // and none sees it come back
		createMemberLease(ctx, t, leases, ns, id) // the member puts it back
		renewFor(2 * time.Second)                 // and renews on
		del()                                     // the second delete, after its last renew
		secondDelete := time.Now()
		deletedTwice.Store(true)
		pollsFail.Store(false)

		after := receive(t, taken, 3*leaseDuration).Sub(secondDelete)
		require.GreaterOrEqual(t, after, time.Second,
			"the sharder took the Lease over %v after its second delete, judged from a sight of its absence older than the member's last renew", after)
	})
}
