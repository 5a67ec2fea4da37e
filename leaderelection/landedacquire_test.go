package leaderelection_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A candidate with ReleaseOnCancel is shutting down while it acquires:
// its create of the Lease lands, but the answer is lost (the connection
// is cut as the process stops), and its context ends before its next
// attempt. Run returns "not acquired", yet the Lease names it, and no
// one will release it: a standby waits out a whole LeaseDuration for a
// candidate that left, which is what ReleaseOnCancel is for avoiding
// ("so a standby takes over on its next attempt ... instead of after a
// LeaseDuration"). Leaving, the candidate gives up a Lease that names
// it: it runs no term, so a standby may start at once.
func TestACandidateLeavingWhileItsAcquiringWriteLandedUnansweredReleasesTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lose atomic.Bool
		lose.Store(true)
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost && lose.Swap(false) {
				return fakeapiserver.Fault{AnswerLost: true} // the create lands; its answer is lost
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		cfg, _ := config(t, mem.Config(), "default", "leaving", "leaving", ts.callbacks("leaving", nil))
		cfg.ReleaseOnCancel = true
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		time.Sleep(retryPeriod / 2) // the first attempt: GET 404, the create lands unanswered
		synctest.Wait()
		require.False(t, lose.Load(), "the create was sent")
		stop() // before the next attempt
		err := <-done
		require.Error(t, err, "Run never led")
		select {
		case tm := <-ts.started:
			t.Fatalf("a term began: %v", tm)
		default:
		}
		lease := getLease(t.Context(), t, mem.Config(), "default", "leaving")
		require.Nil(t, lease.Spec.HolderIdentity, "the Lease still names the candidate that left (Run: %v)", err)
	})
}

// As above, but the read on the way out fails (503): the candidate
// cannot tell whether its unanswered create made the Lease its own, so
// the Lease may go on naming it for a LeaseDuration; it says so in a
// warning rather than leave in silence.
func TestACandidateLeavingUnansweredWhoseLastReadFailsSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lose, leaving atomic.Bool
		lose.Store(true)
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && lose.Swap(false):
				return fakeapiserver.Fault{AnswerLost: true} // the create lands; its answer is lost
			case r.Method == http.MethodGet && leaving.Load():
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		ts := newTerms()
		cfg, _ := config(t, mem.Config(), "default", "leaving", "leaving", ts.callbacks("leaving", nil))
		cfg.ReleaseOnCancel = true
		var logs bytes.Buffer // written by Run only, read once Run has returned
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		ctx, stop := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		time.Sleep(retryPeriod / 2) // the first attempt: GET 404, the create lands unanswered
		synctest.Wait()
		require.False(t, lose.Load(), "the create was sent")
		leaving.Store(true)
		stop()
		require.Error(t, <-done, "Run never led")
		require.Contains(t, logs.String(), "could not read the Lease on the way out",
			"a failed read on the way out left no word of a Lease that may still name the candidate")
	})
}
