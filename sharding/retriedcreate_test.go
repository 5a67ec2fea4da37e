package sharding_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// As TestAMemberIDWhoseTakenOverLeaseWasCollectedNeverStartsATerm, but
// the member's create that landed was answered 500 ServerTimeout with a
// Retry-After (kube-apiserver's answer to a create whose etcd write
// timed out and may yet commit), any retry of it refused (429). The
// elector sends each create once and judges it by its own answer, so
// the create counts as possibly landed, and once the sharder has taken
// the id's Lease over and collected it, the id never starts a term
// (Member.Run: "An id is never reused"). (Before, client-go retried it
// and the elector judged only the refused retry: the id created its
// Lease again and started a term.)
func TestAMemberIDWhoseRetriedCreateLandedNeverStartsATermOnceItsLeaseWasCollected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := fakeapiserver.ServeInMemory(srv)
		t.Cleanup(admin.Close)
		var posts atomic.Int32
		var cut atomic.Bool
		faulty := fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && posts.Add(1) == 2: // client-go's retry of the first create
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests}
			case cut.Load():
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		})
		memberSide := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && posts.CompareAndSwap(0, 1) {
				cut.Store(true)                          // from here it reaches nothing but the retry
				srv.ServeHTTP(httptest.NewRecorder(), r) // the create lands
				status := apierrors.NewServerTimeout(schema.GroupResource{Group: coordinationv1.GroupName, Resource: "leases"}, "create", 1).ErrStatus
				status.Kind, status.APIVersion = "Status", "v1"
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(int(status.Code))
				_ = json.NewEncoder(w).Encode(status)
				return
			}
			faulty.ServeHTTP(w, r)
		}))
		t.Cleanup(memberSide.Close)
		leases := must(leaderelection.NewClient(admin.Config()))
		id := pinnedMemberID(t)

		terms := runRecordingMember(ctx, must(leaderelection.NewClient(memberSide.Config())))

		time.Sleep(5 * time.Second) // the sharder: takes the Lease over, moves the objects, collects the Lease
		name := sharding.LeaseName(ring, id)
		current := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name(name).Do(ctx).Into(current), "the member's first create landed")
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
