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
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A create the API server refused with a Status (429: not processed, as
// API Priority and Fairness answers) cannot have landed: nothing was
// created, so nothing can have been taken over or deleted. Once the
// server accepts creates again, the OwnLeaseOnly candidate should create
// its Lease and lead under the same identity, as before createSent.
func TestAnOwnLeaseOnlyCandidateWhoseCreateWasRefusedStillLeads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var creates atomic.Int32
		side := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost && creates.Add(1) == 1 {
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests} // refused, not served
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		_, done := runOwnLeaseOnly(ctx, t, side.Config(), ts)
		select {
		case <-ts.started:
		case err := <-done:
			t.Fatalf("Run returned %v after one refused create; no Lease was ever created or deleted", err)
		case <-time.After(3 * leaseDuration):
			t.Fatal("no term began")
		}
	})
}

// A candidate that may not create Leases (RBAC) should say so: Run's
// error wraps the last failed attempt's Forbidden (Run's doc), never an
// ErrNotOwnLease claiming "lease ... was deleted" of a Lease that never
// existed.
func TestAnOwnLeaseOnlyCandidatesForbiddenCreateIsReportedAsForbidden(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*leaseDuration)
		defer cancel()
		side := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost {
				return fakeapiserver.Fault{Status: http.StatusForbidden}
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		_, done := runOwnLeaseOnly(ctx, t, side.Config(), ts)
		err := <-done
		require.False(t, errors.Is(err, leaderelection.ErrNotOwnLease), "Run returned %v", err)
		require.True(t, apierrors.IsForbidden(err), "Run returned %v, want the Forbidden", err)
	})
}
