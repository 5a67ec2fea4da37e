package leaderelection_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A standby sees the Lease held by "old" (OnNewLeader("old")). The Lease
// is deleted; the standby waits it out and creates it, but "newcomer"
// created it first (409 AlreadyExists), and it is deleted again before
// the standby's look after the 409 (lookAfterAlreadyExists). The
// standby records the Lease as held by someone unknown (heldByUnknown),
// which reportLeader does not hand to OnNewLeader: Config.OnNewLeader
// says '"" means the Lease was released', and nobody released it.
// (2a016a4 recorded an empty Lease, and OnNewLeader was told "".)
func TestAStandbyWhoseCreateIsAnsweredAlreadyExistsDoesNotReportTheLeaseReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		adminClient := must(leaderelection.NewClient(admin.Config()))
		held := func(id string) *coordinationv1.Lease {
			now := metav1.NewMicroTime(time.Now())
			secs := int32(leaseDuration / time.Second)
			return &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "unknown"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &id, LeaseDurationSeconds: &secs,
					AcquireTime: &now, RenewTime: &now},
			}
		}
		require.NoError(t, adminClient.Post().Namespace("kube-system").Resource("leases").Body(held("old")).Do(ctx).Error())

		var posts, answered atomic.Int32
		standbyMem := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || posts.Add(1) != 1 {
				srv.ServeHTTP(w, r)
				return
			}
			// The newcomer's create lands first; the standby's is answered
			// 409; the Lease is deleted again before the standby looks.
			require.NoError(t, adminClient.Post().Namespace("kube-system").Resource("leases").Body(held("newcomer")).Do(ctx).Error())
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, r)
			answered.Store(int32(rec.Code))
			deleteLease(ctx, t, admin, "unknown")
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		}))

		var mu sync.Mutex
		var reported []string
		spans := make(chan span, 8)
		standby := bubbleCandidate(t, standbyMem, "unknown", "standby", spans, func(c *leaderelection.Config) {
			c.Callbacks.OnNewLeader = func(id string) {
				mu.Lock()
				reported = append(reported, id)
				mu.Unlock()
			}
		})
		done := make(chan error, 1)
		go func() { done <- standby.Run(ctx) }()
		time.Sleep(time.Second) // the standby has seen "old"
		deleteLease(ctx, t, admin, "unknown")
		time.Sleep(3 * leaseDuration) // it waits out the delete, creates (409), waits again
		require.Equal(t, int32(http.StatusConflict), answered.Load(), "the standby's create met the newcomer's")
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, "old", reported[0])
		require.NotContains(t, reported, "",
			"OnNewLeader was told the Lease was released (reported: %q); it never was", reported)
	})
}

// A leader's Lease is released under it by someone else (an admin
// clearing holderIdentity; or a newcomer that re-created it and released
// it). Its renew conflicts, its look finds the Lease present with no
// holder, and its term ends, rightly. lostTo (2a016a4) words every
// ErrLost whose observed holder is "" as "was created by another
// candidate, its holder not seen": this Lease was not created by
// anyone, and its holder (none) was seen. Passing means ErrLost does not
// claim a create, and a holder unseen, for a Lease seen released.
func TestALeaderWhoseLeaseIsReleasedUnderItDoesNotSayAnotherCreatedIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		leading := make(chan struct{}, 1)
		cfg, _ := config(t, inMemory(t, srv).Config(), "kube-system", "released", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
		})
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		<-leading
		time.Sleep(time.Second)

		// Release it under the leader: read, clear, write, again if a renew
		// of the leader's came between (time moves on in the bubble while
		// the admin's requests wait).
		client := must(leaderelection.NewClient(admin.Config()))
		for {
			lease := getLease(ctx, t, admin.Config(), "kube-system", "released")
			one := int32(1)
			lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = nil, &one
			err := client.Put().Namespace("kube-system").Resource("leases").Name("released").Body(lease).Do(ctx).Error()
			if !apierrors.IsConflict(err) {
				require.NoError(t, err)
				break
			}
		}

		select {
		case err := <-done:
			require.ErrorIs(t, err, leaderelection.ErrLost)
			require.NotContains(t, err.Error(), "created by another candidate",
				"ErrLost claims a create for a Lease it saw released: %v", err)
		case <-time.After(leaseDuration):
			t.Fatal("the leader's term went on")
		}
	})
}
