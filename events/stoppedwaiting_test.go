package events

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run's ctx ends while one Event's create hangs and another waits behind
// it. The waiting one is never sent: it is dropped, counted in
// Stats.Dropped and logged, as one recorded a moment later would be.
// (Found by review: Run sent it with the ended ctx, which failed, and
// it was lost, neither counted nor logged, though Eventf accepted it.)
func TestAnEventStillWaitingWhenRunReturnsIsCountedAsDroppedAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{block: make(chan struct{})}
		r, log := newTestRecorder(t, sink, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()                                                                        // its create hangs
		require.NoError(t, r.Eventf(web, Warning, "Pruned", "Delete", "deleted 3 stale keys")) // waits behind it
		cancel()
		<-done
		assert.Equal(t, "created [], patched []", sink.writes())
		// the hung create, cut, is a write that failed
		// (TestACreateCutAsRunsContextEndsIsCountedAndLogged)
		assert.Equal(t, Stats{Dropped: 1, Refused: 1, Recorded: 2}, r.Stats(), "the Event waiting when Run returned is lost, and not counted as dropped")
		assert.Contains(t, log.String(), `msg="events: dropped Events waiting to be created: the Recorder's Run has returned" dropped=1`)
	})
}
