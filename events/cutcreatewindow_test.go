package events

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOccurrencesOfACutCreateAreNotLostWhenANewSeriesStartsMeanwhile:
// the first create hangs (a black-holed connection) and is then cut
// without landing; a repeat came meanwhile. Seven minutes on, past the
// series window, a third occurrence starts a new series. The cut create
// is taken as created, its series write finds no Event (404), and the
// occurrences it never stored are created as an Event of their own,
// though another series has the key now. Found by an adversarial review:
// they were dropped, the series being no longer the key's.
func TestOccurrencesOfACutCreateAreNotLostWhenANewSeriesStartsMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		sink := &storeSink{firstCreate: func(ctx context.Context) (bool, error) {
			select { // a black-holed connection, cut at release
			case <-release:
				return false, errors.New("read tcp: connection timed out")
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait() // the first create is in flight, held
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(7 * time.Minute)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // past the window: a new series
		close(release)                                                                    // the first create is cut, unlanded
		time.Sleep(time.Minute)
		synctest.Wait()
		var n int32
		for _, count := range sink.counts() {
			n += count
		}
		assert.Equal(t, int32(3), n,
			"three occurrences, the server stored none of the first two, yet the stored Events count %v: %+v", sink.counts(), r.Stats())
	})
}
