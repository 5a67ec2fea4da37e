package sharding_test

import (
	"bytes"
	"context"
	"fmt"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// goneScene is a fake API server whose member Leases the test writes
// and deletes by hand, counting the member Leases anyone else (a
// sharder) creates for a member id beginning with "gone".
type goneScene struct {
	t       *testing.T
	ctx     context.Context
	cfg     *rest.Config
	leases  *rest.RESTClient
	created atomic.Int64 // "gone" member Leases created by anyone but the test
	byTest  atomic.Bool
}

// newGoneScene starts the scene's server; it stops with the test.
func newGoneScene(ctx context.Context, t *testing.T) *goneScene {
	sc := &goneScene{t: t, ctx: ctx}
	srv := fakeapiserver.New()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases") && !sc.byTest.Load() {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(sharding.LeaseName(ring, "gone"))) {
				sc.created.Add(1)
			}
		}
		srv.ServeHTTP(w, r)
	})
	mem := fakeapiserver.ServeInMemory(handler)
	t.Cleanup(mem.Close)
	sc.cfg = fast(mem.Config())
	sc.leases = must(leaderelection.NewClient(sc.cfg))
	return sc
}

// post creates a Lease as the test.
func (sc *goneScene) post(name string, holder string, seconds int32, labels map[string]string) {
	sc.byTest.Store(true)
	defer sc.byTest.Store(false)
	now := metav1.NewMicroTime(time.Now())
	require.NoError(sc.t, sc.leases.Post().Namespace("default").Resource("leases").Body(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
	}).Do(sc.ctx).Error())
}

// postMember creates member id's Lease, held by id, as the test.
func (sc *goneScene) postMember(id string) {
	sc.post(sharding.LeaseName(ring, id), id, int32(leaseDuration/time.Second),
		map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id})
}

// remove deletes a Lease as the test.
func (sc *goneScene) remove(name string) {
	require.NoError(sc.t, sc.leases.Delete().Namespace("default").Resource("leases").Name(name).Do(sc.ctx).Error())
}

// requireElected fails the test unless the ring's election is held by
// someone other than notBy: a test of what a leader does proves nothing
// if the sharder never led.
func (sc *goneScene) requireElected(notBy string) {
	var elected coordinationv1.Lease
	require.NoError(sc.t, sc.leases.Get().Namespace("default").Resource("leases").Name("sharder-"+ring).Do(sc.ctx).Into(&elected))
	require.NotNil(sc.t, elected.Spec.HolderIdentity, "the sharder was never elected: the test proves nothing")
	require.NotEqual(sc.t, notBy, *elected.Spec.HolderIdentity, "the sharder was never elected: the test proves nothing")
}

// A standby sharder polls the member Leases for as long as it stands by,
// and members come and go under it: each term a new id, whose Lease the
// leader collects once it owns nothing. A standby that kept every id it
// ever saw would grow with the churn for the life of its process, and,
// once elected, would judge each one absent and create its Lease to take
// it over, only to delete it again: a burst of writes for members gone
// long ago, each also counted as a takeover. A standby keeps what the
// Leases say now, as a sharder started at that moment would. Here three
// members' Leases come and go while the sharder stands by; once it is
// elected, no member Lease may be created.
func TestAStandbyElectedCreatesNoLeaseForMembersThatLeftWhileItStoodBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sc := newGoneScene(ctx, t)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		// Another sharder holds the ring's election, and renews no more:
		// the sharder is elected half a minute after it first saw it.
		sc.post("sharder-"+ring, "another-sharder", 30, nil)
		startSharder(ctx, t, &wg, sc.cfg, "default", &sync.Map{})

		for i := range 3 {
			id := fmt.Sprintf("gone%d", i)
			sc.postMember(id)
			time.Sleep(4 * retryPeriod) // polled alive
			sc.remove(sharding.LeaseName(ring, id))
			time.Sleep(4 * retryPeriod) // polled absent
		}
		time.Sleep(30*time.Second + 4*leaseDuration) // elected, and sharding

		sc.requireElected("another-sharder")
		require.Zero(t, sc.created.Load(), "the elected sharder created the Leases of members that had left")
	})
}

// The leader's half of the same: a member Lease deleted by someone else
// while the sharder leads. Absence is not death (the member may renew
// by creating its Lease again), so a member that owns objects is taken
// over first, by creating its Lease as held by the sharder. One that
// owns nothing has nothing to move: taking it over would create a Lease
// only for collection to delete it, two writes and a takeover counted
// for nothing. The leader forgets it instead, as a standby does; an
// object that names it later has it judged afresh.
func TestALeaderCreatesNoLeaseForAMemberThatOwnsNothingWhoseLeaseWasDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sc := newGoneScene(ctx, t)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		startSharder(ctx, t, &wg, sc.cfg, "default", &sync.Map{})
		sc.postMember("gone0")
		time.Sleep(4 * retryPeriod) // elected, and the member polled alive, well within its duration
		sc.remove(sharding.LeaseName(ring, "gone0"))
		time.Sleep(4 * leaseDuration) // polled absent for longer than its duration

		sc.requireElected("")
		require.Zero(t, sc.created.Load(), "the leader created the Lease of a member that owned nothing, to take it over")
	})
}
