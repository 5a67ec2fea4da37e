package leaderelection_test

import (
	"context"
	"errors"
	"net/http"
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
)

// A candidate with OwnLeaseOnly leads on a Lease it creates, or one that
// already names it (its create landed though the answer was lost), and
// never takes one held by another identity or by none, expired or not:
// Run returns ErrNotOwnLease with no term begun.
func TestAnOwnLeaseOnlyCandidateNeverTakesALeaseHeldByAnotherOrReleased(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder *string // the Lease's holder before the candidate runs; nil: no Lease
		leads  bool
	}{
		{"no Lease", nil, true},
		{"a Lease naming it", ptr("me"), true},
		{"a Lease another took over, expired", ptr("taken-over-by-sharder:s1"), false},
		{"a released Lease", ptr(""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				net := fakeapiserver.ServeInMemory(fakeapiserver.New())
				t.Cleanup(net.Close)
				leases := must(leaderelection.NewClient(net.Config()))
				if tc.holder != nil {
					seconds, at := int32(leaseDuration/time.Second), metav1.NewMicroTime(time.Now())
					lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "own"},
						Spec: coordinationv1.LeaseSpec{HolderIdentity: tc.holder, RenewTime: &at, LeaseDurationSeconds: &seconds}}
					require.NoError(t, leases.Post().Namespace("default").Resource("leases").Body(lease).Do(ctx).Error())
				}
				ts := newTerms()
				_, done := runOwnLeaseOnly(ctx, t, net.Config(), ts)
				time.Sleep(3 * leaseDuration) // past any expiry
				cancel()
				err := <-done
				ts.mu.Lock()
				defer ts.mu.Unlock()
				if tc.leads {
					require.Len(t, ts.all, 1, "a candidate whose Lease is its own leads")
					return
				}
				require.Empty(t, ts.all, "a term began on a Lease held by %q", *tc.holder)
				require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v, want ErrNotOwnLease", err)
			})
		})
	}
}

// runOwnLeaseOnly runs candidate "me" of Lease default/own, OwnLeaseOnly,
// over cfg until ctx ends; its terms go to ts, Run's error to the
// channel returned.
func runOwnLeaseOnly(ctx context.Context, t *testing.T, cfg *rest.Config, ts *terms) (*leaderelection.Elector, <-chan error) {
	c, _ := config(t, cfg, "default", "own", "me", ts.callbacks("me", nil))
	c.OwnLeaseOnly = true
	el := must(leaderelection.New(c))
	done := make(chan error, 1)
	go func() { done <- el.Run(ctx) }()
	return el, done
}

func ptr(s string) *string { return &s }

// An OwnLeaseOnly candidate whose create landed though its answer was
// lost, and that then could not reach the API server while another
// took the Lease over and deleted it (a sharder collects a dead
// member's Lease), does not create it again and lead: Run returns
// ErrNotOwnLease. It never saw its Lease; that it sent a create is
// enough.
func TestAnOwnLeaseOnlyCandidateWhoseLandedCreateWasTakenAndDeletedDoesNotLead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		var cut atomic.Bool
		var creates atomic.Int32
		side := inMemory(t, fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && creates.Add(1) == 1:
				cut.Store(true)                              // from here the candidate reaches nothing;
				return fakeapiserver.Fault{AnswerLost: true} // its create lands unanswered
			case cut.Load():
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		leases := must(leaderelection.NewClient(admin.Config()))
		ts := newTerms()
		_, done := runOwnLeaseOnly(ctx, t, side.Config(), ts)

		time.Sleep(2 * attemptTimeout)
		lease := &coordinationv1.Lease{}
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name("own").Do(ctx).Into(lease))
		require.Equal(t, "me", *lease.Spec.HolderIdentity, "the candidate's create landed late")

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
		require.Empty(t, ts.all, "a term began on the Lease its create made, after %q took it over and deleted it", other)
		require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v, want ErrNotOwnLease", err)
	})
}

// An OwnLeaseOnly leader that finds its Lease taken loses its term with
// ErrLost, as any leader does, and a Run after that does not take the
// Lease back: it returns ErrNotOwnLease.
func TestAnOwnLeaseOnlyLeaderWhoseLeaseIsTakenLosesItsTermAndDoesNotLeadAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		net := inMemory(t, fakeapiserver.New())
		admin := must(leaderelection.NewClient(net.Config()))
		ts := newTerms()
		el, done := runOwnLeaseOnly(ctx, t, net.Config(), ts)
		awaitTerm(t, ts, 2*attemptTimeout, "the candidate creates its Lease")

		lease := getLease(ctx, t, net.Config(), "default", "own")
		other := "taken-over-by-sharder:s1"
		lease.Spec.HolderIdentity = &other
		require.NoError(t, admin.Put().Namespace("default").Resource("leases").Name("own").Body(lease).Do(ctx).Error())
		var err error
		select {
		case err = <-done:
		case <-time.After(renewDeadline + attemptTimeout):
			t.Fatal("the leader did not see its Lease taken")
		}
		require.True(t, errors.Is(err, leaderelection.ErrLost), "the leader's Run returned %v, want ErrLost", err)

		time.Sleep(2 * leaseDuration) // the taker's hold expires
		err = el.Run(ctx)
		require.True(t, errors.Is(err, leaderelection.ErrNotOwnLease), "a second Run returned %v, want ErrNotOwnLease", err)
		ts.mu.Lock()
		defer ts.mu.Unlock()
		require.Len(t, ts.all, 1, "the identity led again on a Lease %q took", other)
	})
}
