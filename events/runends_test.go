package events

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/internal/testlog"
)

// Run's ctx ends while an Event's create is in flight: the end cuts the
// create, which may have landed, as any create that got no answer may.
// It is settled as one: counted in Stats.Refused (a write that failed),
// logged, and taken as created. (Found by review: it was let go
// silently, in no count at all, neither Created, Dropped nor Refused,
// though Eventf had accepted it.)
func TestACreateCutAsRunsContextEndsIsCountedAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, log := endRunWhileACreateHangs(t, func(*Recorder) {})
		assert.Equal(t, Stats{Refused: 1, Recorded: 1}, r.Stats(), "an Event whose create Run's end cut is in no count")
		assert.Contains(t, log.String(), `msg="events: an Event's create may have landed; it is taken as created" reason=SecretNotOurs regarding="ConfigMap shop/web" err="context canceled"`)
	})
}

// Run's ctx ends while one Event's create hangs and another waits behind
// it. The waiting one is never sent: it is dropped, counted in
// Stats.Dropped and logged, as one recorded a moment later would be.
// (Found by review: Run sent it with the ended ctx, which failed, and
// it was lost, neither counted nor logged, though Eventf accepted it.)
func TestAnEventStillWaitingWhenRunReturnsIsCountedAsDroppedAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, sink, log := endRunWhileACreateHangs(t, func(r *Recorder) {
			require.NoError(t, r.Eventf(web, Warning, "Pruned", "Delete", "deleted 3 stale keys")) // waits behind it
		})
		assert.Equal(t, "created [], patched []", sink.writes())
		// the hung create, cut, is a write that failed
		// (TestACreateCutAsRunsContextEndsIsCountedAndLogged)
		assert.Equal(t, Stats{Dropped: 1, Refused: 1, Recorded: 2}, r.Stats(), "the Event waiting when Run returned is lost, and not counted as dropped")
		assert.Contains(t, log.String(), `msg="events: dropped Events waiting to be created: the Recorder's Run has returned" dropped=1`)
	})
}

// endRunWhileACreateHangs runs, in the caller's bubble, a Recorder over
// a sink whose creates hang: it records a warning, waits until its
// create hangs, calls then, and ends Run's ctx. It returns once Run
// has returned.
func endRunWhileACreateHangs(t *testing.T, then func(*Recorder)) (*Recorder, *fakeSink, *testlog.Buffer) {
	t.Helper()
	sink := &fakeSink{block: make(chan struct{})}
	r, log := newTestRecorder(t, sink, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
	synctest.Wait() // its create hangs
	then(r)
	cancel()
	<-done
	return r, sink, log
}
