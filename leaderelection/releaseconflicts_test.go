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

// TestAReleaseThatMeetsTwoConflictsIsRunsError: with ReleaseOnCancel, a
// term ended by its context returns nil only once the release landed. A
// release gives a conflict one more try; after a second, with the Lease
// still naming this candidate, it is not released, and Run says so.
// Found by an adversarial review: release returned nil after its second
// conflict.
func TestAReleaseThatMeetsTwoConflictsIsRunsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var conflictWrites atomic.Bool
		var puts atomic.Int32
		srv := fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if conflictWrites.Load() && r.Method != http.MethodGet {
				puts.Add(1)
				return fakeapiserver.Fault{Status: http.StatusConflict}
			}
			return fakeapiserver.Fault{}
		})
		mem := inMemory(t, srv)
		ts := newTerms()
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		cfg, _ := config(t, mem.Config(), "default", "conflicted-release", "leaving", ts.callbacks("leaving", nil))
		cfg.ReleaseOnCancel = true
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		awaitTerm(t, ts, takeoverBound+time.Minute, "the candidate leads")

		conflictWrites.Store(true)
		stop()
		err := <-done
		require.GreaterOrEqual(t, puts.Load(), int32(2), "the release was tried and refused with a conflict")
		require.Error(t, err, "the release never landed (every write met a 409), yet Run returned nil")
	})
}
