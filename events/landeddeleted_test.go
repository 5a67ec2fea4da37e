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

// The first create lands but its answer is lost: the Event is taken as
// created, not known to be. Someone deletes it; a repeat comes, and its
// series update finds no Event (404), as it would had the create never
// landed: the Recorder cannot tell the two apart, so it remakes the
// Event, under its own name, with every occurrence, the deleted Event's
// included. No Event counts an occurrence twice (the deleted one is
// gone), and none is lost; an Event known to be created and deleted
// since is remade with the later occurrences only
// (TestAnOccurrenceWhoseSeriesWriteFindsTheEventExpiredIsCreatedAnew).
func TestAnEventTakenAsCreatedThatLandedAndWasDeletedIsRemadeWithEveryOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &storeSink{firstCreate: func(context.Context) (bool, error) {
			return true, errors.New("read tcp: connection reset by peer") // landed, answer lost
		}}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		sink.mu.Lock()
		var first string
		for name := range sink.stored {
			first = name
		}
		clear(sink.stored) // deleted, by someone else
		sink.mu.Unlock()
		require.NotEmpty(t, first, "the first create landed")
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(time.Minute) // the series update is due, 404s, the Event is remade
		synctest.Wait()
		assert.Equal(t, []int32{2}, sink.counts(), "%+v", r.Stats())
		sink.mu.Lock()
		defer sink.mu.Unlock()
		assert.Contains(t, sink.stored, first, "remade under its own name")
	})
}
