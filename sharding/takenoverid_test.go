package sharding_test

import (
	"context"
	"net/http"
	"slices"
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
	"github.com/listwatch/informer/internal/random"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member id whose Lease a sharder took over before the id's first term
// began never starts a term. The member's acquiring create timed out on
// its side yet landed; it then could not renew for a LeaseDuration, so
// the sharder, which had counted the id alive and given it objects, took
// the Lease over and moved them without a drain. The id's elector used
// to wait the taken-over Lease out and acquire it: its term ran while
// the sharder, until its next poll, still took the id for dead and moved
// the rest of its objects (found by review, simulated: "moves only by
// drain" and "children follow parents" would both fail). Promise:
// Member.Run, "An id is never reused ... nothing may reconcile under
// that id again".
func TestAMemberIDWhoseLeaseASharderTookOverNeverStartsATerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		leases := must(leaderelection.NewClient(net.Config()))
		id := pinnedMemberID(t)

		by, seconds, now := "taken-over-by-sharder:s1", int32(4), metav1.NewMicroTime(time.Now())
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: sharding.LeaseName(ring, id),
			Labels: map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &by, RenewTime: &now, LeaseDurationSeconds: &seconds}}
		require.NoError(t, leases.Post().Namespace("default").Resource("leases").Body(lease).Do(ctx).Error())

		terms := runRecordingMember(ctx, leases)
		time.Sleep(20 * time.Second)
		cancel()
		started := terms()
		require.NotContains(t, started, id, "member id %s started a term on the Lease a sharder had taken over (holder %q)", id, by)
		require.NotEmpty(t, started, "the member never joined under a new id")
	})
}

// The same when the sharder, having taken the id's Lease over, collected
// it (it deletes a dead member's Lease once no object names the id):
// the id's create landed though its answer was lost, so its elector
// never saw the Lease, and it used to create it afresh on the NotFound
// and lead (found by review). Now an id that sent a create treats its
// Lease's absence as the end of the id.
func TestAMemberIDWhoseTakenOverLeaseWasCollectedNeverStartsATerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := fakeapiserver.ServeInMemory(srv)
		t.Cleanup(admin.Close)
		var cut atomic.Bool
		var creates atomic.Int32
		memberSide := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && creates.Add(1) == 1:
				cut.Store(true)                              // from here the member reaches nothing;
				return fakeapiserver.Fault{AnswerLost: true} // its create lands unanswered
			case cut.Load():
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(memberSide.Close)
		leases := must(leaderelection.NewClient(admin.Config()))
		id := pinnedMemberID(t)

		terms := runRecordingMember(ctx, must(leaderelection.NewClient(memberSide.Config())))

		time.Sleep(5 * time.Second) // the sharder: takes the Lease over, moves the objects, collects the Lease
		name := sharding.LeaseName(ring, id)
		current := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name(name).Do(ctx).Into(current), "the member's create landed")
		by := "taken-over-by-sharder:s1"
		current.Spec.HolderIdentity = &by
		require.NoError(t, leases.Put().Namespace("default").Resource("leases").Name(name).Body(current).Do(ctx).Into(current))
		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name(name).Do(ctx).Error())

		cut.Store(false) // the member reaches the API server again
		time.Sleep(10 * time.Second)
		cancel()
		started := terms()
		require.NotContains(t, started, id, "member id %s started a term after a sharder took its Lease over (holder %q) and collected it", id, by)
		require.NotEmpty(t, started, "the member never joined under a new id")
	})
}

// pinnedMemberID seeds the library's random source so that a member
// named "zz" of ring takes a known first id, and returns that id; the
// seed is restored when the test ends.
func pinnedMemberID(t *testing.T) string {
	restore := random.Seed(7)
	token, err := random.Token(ring+"/zz", 4)
	restore()
	require.NoError(t, err)
	t.Cleanup(random.Seed(7)) // the member's first id is "zz-"+token
	return "zz-" + token
}

// runRecordingMember runs member "zz" of ring over client until ctx
// ends; terms returns the ids whose terms started, once Run returned.
func runRecordingMember(ctx context.Context, client *rest.RESTClient) (terms func() []string) {
	var mu sync.Mutex
	var started []string
	m := must(sharding.NewMember(sharding.MemberConfig{Client: client, Namespace: "default", Ring: ring, Name: "zz",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		Run: func(ctx context.Context, shard sharding.Shard) {
			mu.Lock()
			started = append(started, shard.Member)
			mu.Unlock()
			<-ctx.Done()
		}}))
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Run(ctx) }()
	return func() []string {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(started)
	}
}
