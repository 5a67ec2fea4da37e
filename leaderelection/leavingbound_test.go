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

// A candidate leaving before it led, after a create whose answer was
// lost, reads the Lease and releases it: one release, which
// AttemptTimeout bounds ("AttemptTimeout bounds each attempt ... and the
// release"). On a slow server — the read and the write on the way out
// each take most of an AttemptTimeout — Run still returns within one
// AttemptTimeout of its context's end, not one for the read and another
// for the write. On the fake API server, in a synctest bubble.
func TestALeavingCandidatesReadAndReleaseAreBoundedByOneAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lose, leaving atomic.Bool
		lose.Store(true)
		slow := attemptTimeout * 4 / 5
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.Method == http.MethodPost && lose.Swap(false):
				return fakeapiserver.Fault{AnswerLost: true} // the create lands; its answer is lost
			case leaving.Load():
				return fakeapiserver.Fault{Latency: slow}
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
		leaving.Store(true)
		stopped := time.Now()
		stop()
		require.Error(t, <-done, "Run never led")
		took := time.Since(stopped)
		require.LessOrEqual(t, took, attemptTimeout,
			"Run returned %v after its context ended: the read and the release on the way out took an AttemptTimeout (%v) each", took, attemptTimeout)
	})
}
