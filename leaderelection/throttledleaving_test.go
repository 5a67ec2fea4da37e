package leaderelection_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// Found by a review of 301c2ea: a standby's create lands unanswered, as in
// TestACandidateLeavingWhileItsAcquiringWriteLandedUnansweredReleasesTheLease.
// Its next attempt reads the Lease, which names it: that look clears
// e.unanswered ("what an earlier write did, this look shows"), though
// what it shows is that the Lease is this candidate's. The update that
// would take it is throttled (429 with a Retry-After, API Priority and
// Fairness), and the process shuts down during the Retry-After wait.
// The 429 is "refused", so unanswered stays false, and the candidate
// leaves without releasing a Lease it has just read as its own: a
// standby waits out a whole LeaseDuration, which ReleaseOnCancel's
// promise for a candidate leaving before it led rules out.
//
// Passing: once Run has returned, the Lease names nobody.
func TestACandidateLeavingWhileThrottledAfterItsUnansweredCreateLandedReleasesTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lose, throttle, throttled atomic.Bool
		lose.Store(true)
		throttle.Store(true)
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && lose.Swap(false):
				return fakeapiserver.Fault{AnswerLost: true} // the create lands; its answer is lost
			case r.Method == http.MethodPut && throttle.Swap(false):
				throttled.Store(true)
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1} // APF: not acted on
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		cfg, _ := config(t, mem.Config(), "default", "leaving", "leaving", ts.callbacks("leaving", nil))
		cfg.ReleaseOnCancel = true
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		for !throttled.Load() { // attempt 1: GET 404, create lands unanswered; attempt 2: GET (its own), PUT 429
			time.Sleep(retryPeriod / 10)
			synctest.Wait()
		}
		require.Equal(t, "leaving", *getLease(t.Context(), t, mem.Config(), "default", "leaving").Spec.HolderIdentity,
			"the unanswered create made the Lease the candidate's")
		stop() // shutting down during the Retry-After wait
		err := <-done
		require.Error(t, err, "Run never led")
		select {
		case tm := <-ts.started:
			t.Fatalf("a term began: %v", tm)
		default:
		}
		lease := getLease(t.Context(), t, mem.Config(), "default", "leaving")
		require.Nil(t, lease.Spec.HolderIdentity, "the Lease still names the candidate that left, which read it as its own before leaving (Run: %v)", err)
	})
}
