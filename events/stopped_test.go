package events

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An Event recorded after Run has returned will never be sent (Run
// cannot be called again): Eventf drops it, counts it in Stats.Dropped
// and logs it, as it does an Event past MaxPending. (Found by review: it
// was queued for good, neither sent, nor counted, nor logged, for the
// first MaxPending Events; only then did a warning ask "is Run
// running?".)
func TestAnEventRecordedAfterRunReturnedIsDroppedCountedAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		r, log := newTestRecorder(t, sink, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		synctest.Wait()
		cancel()
		<-done
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"), "recording never fails but for bad arguments")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, "created [], patched []", sink.writes())
		assert.Equal(t, Stats{Dropped: 1, Recorded: 1}, r.Stats(), "an Event recorded after Run returned is lost, and not counted as dropped")
		assert.Contains(t, log.String(), `msg="events: dropped an Event: the Recorder's Run has returned" reason=SecretNotOurs regarding="ConfigMap shop/web"`)
	})
}
