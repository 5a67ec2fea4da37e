package leaderelection_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
				cfg, _ := config(t, net.Config(), "default", "own", "me", ts.callbacks("me", nil))
				cfg.OwnLeaseOnly = true
				el := must(leaderelection.New(cfg))
				done := make(chan error, 1)
				go func() { done <- el.Run(ctx) }()
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

func ptr(s string) *string { return &s }
