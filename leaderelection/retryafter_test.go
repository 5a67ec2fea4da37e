package leaderelection_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/informer/fakeapiserver"
)

// As TestAnOwnLeaseOnlyCandidateWhoseCreateWasRefusedStillLeads, with
// the 429 a real API server sends: API Priority and Fairness always
// names a Retry-After. The elector sends the create once, so it sees the
// 429 itself, counts the create for nothing, and leads once creates are
// accepted. (Before, client-go waited out the Retry-After to retry, the
// attempt's context ended meanwhile, and the refused create, failed with
// a context error, ended the identity: "lease default/own was
// deleted".)
func TestAnOwnLeaseOnlyCandidateWhoseCreateWasRefusedWithARetryAfterStillLeads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var creates atomic.Int32
		side := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost && creates.Add(1) == 1 {
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1} // refused, not served
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		_, done := runOwnLeaseOnly(ctx, t, side.Config(), ts)
		select {
		case <-ts.started:
		case err := <-done:
			t.Fatalf("Run returned %v after one create refused with a 429 (%d creates reached the server); no Lease was ever created or deleted", err, creates.Load())
		case <-time.After(3 * leaseDuration):
			t.Fatal("no term began")
		}
	})
}
