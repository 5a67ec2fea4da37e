package events

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangingPatchSink creates as fakeSink does; its series updates hang
// until their context ends.
type hangingPatchSink struct{ fakeSink }

func (s *hangingPatchSink) patchSeries(ctx context.Context, _, _ string, _ eventsv1.EventSeries) error {
	<-ctx.Done()
	return ctx.Err()
}

// Run's ctx ends while a series update is in flight: the end cuts it.
// It is counted as a write that failed (Stats.Refused) and logged, as a
// cut, not as a refusal: the API server refused nothing, the Recorder
// stopped.
func TestASeriesUpdateCutAsRunsContextEndsIsLoggedAsCutNotRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, log := newTestRecorder(t, &hangingPatchSink{}, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(seriesFlush + time.Second) // the series update is due, and hangs
		synctest.Wait()
		cancel()
		<-done
		assert.Equal(t, Stats{Created: 1, Repeats: 1, Refused: 1, Recorded: 2}, r.Stats())
		assert.NotContains(t, log.String(), "the API server refused", "a write the Recorder's stop cut, logged as the server's refusal")
		assert.Contains(t, log.String(), `msg="events: an Event's write was cut as the Recorder's Run returned; it is not retried" reason=SecretNotOurs regarding="ConfigMap shop/web" err="context canceled"`)
	})
}

// A series update that gets no answer within Options.RequestTimeout,
// while Run goes on, was not refused either: it is counted as a write
// that failed (Stats.Refused) and logged as one that got no answer, not
// as the API server's refusal.
func TestASeriesUpdateThatTimesOutIsLoggedAsUnansweredNotRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, log := newTestRecorder(t, &hangingPatchSink{}, Options{RequestTimeout: 5 * time.Second})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(seriesFlush + 10*time.Second) // the series update is due, hangs, and times out
		synctest.Wait()
		assert.Equal(t, Stats{Created: 1, Repeats: 1, Refused: 1, Recorded: 2}, r.Stats())
		assert.NotContains(t, log.String(), "the API server refused", "a write that got no answer, logged as the server's refusal")
		assert.Contains(t, log.String(), `msg="events: an Event's write got no answer; it is not retried" reason=SecretNotOurs regarding="ConfigMap shop/web" err="context deadline exceeded"`)
	})
}
