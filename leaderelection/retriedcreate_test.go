package leaderelection_test

import (
	"context"
	"encoding/json"
	"errors"
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
)

// A create that landed and was answered with a 5xx and a Retry-After, as
// kube-apiserver answers one whose etcd write timed out and may yet
// commit (500 ServerTimeout, Retry-After), followed here by a refusal of
// any retry (a 429; a 401 of a token that expired meanwhile, a 403,
// would do the same). The candidate, cut off from the server, never sees
// the Lease its create made; a sharder takes it over and collects it.
// The elector sends each create once and judges it by its own answer, a
// 500, so it counts as possibly landed, and the candidate never creates
// that Lease again (OwnLeaseOnly). (Before, client-go retried the
// create and the elector judged only the refused retry: the candidate
// created the Lease again and led.)
func TestAnOwnLeaseOnlyCandidateWhoseRetriedCreateLandedDoesNotLeadOnceItsLeaseIsTakenAndDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
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
		side := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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

		ts := newTerms()
		c, _ := config(t, side.Config(), "default", "own", "me", ts.callbacks("me", nil))
		c.OwnLeaseOnly = true
		c.AttemptTimeout = 2 * time.Second // room for client-go's retry after Retry-After: 1
		el := must(leaderelection.New(c))
		done := make(chan error, 1)
		go func() { done <- el.Run(ctx) }()

		time.Sleep(c.AttemptTimeout + maxAcquireWait)
		leases := must(leaderelection.NewClient(admin.Config()))
		lease := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name("own").Do(ctx).Into(lease), "the first create landed")
		require.Equal(t, "me", *lease.Spec.HolderIdentity)

		time.Sleep(leaseDuration) // the sharder takes it over, then collects it
		other := "taken-over-by-sharder:s1"
		lease.Spec.HolderIdentity = &other
		require.NoError(t, leases.Put().Namespace("default").Resource("leases").Name("own").Body(lease).Do(ctx).Into(lease))
		require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name("own").Do(ctx).Error())
		cut.Store(false)

		var err error
		select {
		case err = <-done:
		case <-time.After(3 * leaseDuration):
			cancel()
			err = <-done
		}
		ts.mu.Lock()
		defer ts.mu.Unlock()
		require.Empty(t, ts.all, "a term began on the Lease its first create made, after %q took it over and deleted it", other)
		require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v, want ErrNotOwnLease", err)
	})
}
