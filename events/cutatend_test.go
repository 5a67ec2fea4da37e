package events

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run's ctx ends while an Event's create is in flight: the end cuts the
// create, which may have landed, as any create that got no answer may.
// It is settled as one: counted in Stats.Refused (a write that failed),
// logged, and taken as created. (Found by review: it was let go
// silently, in no count at all, neither Created, Dropped nor Refused,
// though Eventf had accepted it.)
func TestACreateCutAsRunsContextEndsIsCountedAndLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{block: make(chan struct{})}
		r, log := newTestRecorder(t, sink, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait() // its create hangs
		cancel()
		<-done
		assert.Equal(t, Stats{Refused: 1, Recorded: 1}, r.Stats(), "an Event whose create Run's end cut is in no count")
		assert.Contains(t, log.String(), `msg="events: an Event's create may have landed; it is taken as created" reason=SecretNotOurs regarding="ConfigMap shop/web" err="context canceled"`)
	})
}
