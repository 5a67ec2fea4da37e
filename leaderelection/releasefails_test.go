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

// releaseAnswered runs a candidate with ReleaseOnCancel until it leads,
// then answers every write with status and ends its context: it returns
// how many writes were answered so, and Run's error. Call it in a synctest
// bubble.
func releaseAnswered(t *testing.T, status int) (int32, error) {
	var refuse atomic.Bool
	var refused atomic.Int32
	srv := fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
		if refuse.Load() && r.Method != http.MethodGet {
			refused.Add(1)
			return fakeapiserver.Fault{Status: status}
		}
		return fakeapiserver.Fault{}
	})
	mem := inMemory(t, srv)
	ts := newTerms()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cfg, _ := config(t, mem.Config(), "default", "release", "leaving", ts.callbacks("leaving", nil))
	cfg.ReleaseOnCancel = true
	done := make(chan error, 1)
	go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
	awaitTerm(t, ts, takeoverBound+time.Minute, "the candidate leads")
	refuse.Store(true)
	stop()
	err := <-done
	return refused.Load(), err
}

// TestARunEndedByItsContextReturnsTheReleasesErrorWhenTheReleaseFails:
// with ReleaseOnCancel, a term its context ended returns nil only if the
// release landed; a release the server refused is Run's error (not
// ErrLost: the term was not lost), so a caller can tell the next leader
// must wait the Lease out.
func TestARunEndedByItsContextReturnsTheReleasesErrorWhenTheReleaseFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, err := releaseAnswered(t, http.StatusInternalServerError)
		require.Error(t, err, "the release was refused")
		require.NotErrorIs(t, err, leaderelection.ErrLost, "the term was ended by its context, not lost")
		require.ErrorContains(t, err, "releasing the Lease")
	})
}

// TestAReleaseThatMeetsTwoConflictsIsRunsError: a release gives a
// conflict one more try; after a second, with the Lease still naming
// this candidate, it is not released, and Run says so. Found by an
// adversarial review: release returned nil after its second conflict.
func TestAReleaseThatMeetsTwoConflictsIsRunsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		writes, err := releaseAnswered(t, http.StatusConflict)
		require.GreaterOrEqual(t, writes, int32(2), "the release was tried and refused with a conflict")
		require.Error(t, err, "the release never landed (every write met a 409), yet Run returned nil")
		require.ErrorContains(t, err, "not released")
	})
}
