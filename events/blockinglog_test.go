package events

import (
	"log/slog"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockedWriter is a log destination that takes nothing until open is
// closed: stderr into a full pipe.
type blockedWriter struct{ open chan struct{} }

func (w blockedWriter) Write(b []byte) (int, error) {
	<-w.open
	return len(b), nil
}

// Recording never waits for the API server or for Run, but an Eventf
// that drops its Event writes the warning itself: a log handler that
// blocks holds that Eventf up, and only it (an Eventf meanwhile returns
// at once). (Found by review: doc.go, the Recorder's doc and docs/08
// said recording never blocks the reconcile; it failed with "Eventf
// blocked on the log handler".)
func TestAnEventfThatDropsItsEventWaitsForTheLogHandlerAndNoOtherEventfDoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newTestRecorder(t, &fakeSink{}, Options{MaxPending: 1})
		w := blockedWriter{open: make(chan struct{})}
		r.opts.Logger = slog.New(slog.NewTextHandler(w, nil))
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // waits for Run, not started
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			_ = r.Eventf(web, Normal, "Synced", "Update", "in sync") // past MaxPending: dropped, and a warning
		}()
		synctest.Wait()
		select {
		case <-returned:
			require.Fail(t, "the dropping Eventf returned before its warning was written")
		default:
		}
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // a repeat: returns at once
		close(w.open)
		<-returned
		assert.Equal(t, Stats{Repeats: 1, Dropped: 1, Recorded: 3}, r.Stats())
	})
}
