package events

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The Event expires; two more occurrences come at 00:00:01, and their
// series write, at 00:00:10, finds it gone: the Event made anew for them
// is not dated after them. Its eventTime (first observed) is at most its
// series' lastObservedTime, or `kubectl describe` shows an Event first
// seen after it was last seen. (Found by review: it was dated 00:00:10,
// the time of the remake, with a lastObservedTime of 00:00:01.)
func TestARemadeEventIsNotDatedAfterTheOccurrencesItCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &patchSink{release: make(chan struct{}),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "web.1")}
		close(sink.release) // patches answer at once: 404
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		time.Sleep(time.Second)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(time.Minute) // the series write is due at 00:00:10, finds no Event, and the Event is made anew
		synctest.Wait()
		sink.mu.Lock()
		defer sink.mu.Unlock()
		require.Len(t, sink.created, 2)
		remade := sink.created[1]
		require.NotNil(t, remade.Series)
		assert.False(t, remade.EventTime.After(remade.Series.LastObservedTime.Time),
			"the remade Event was first observed at %v, after its last occurrence at %v", remade.EventTime.Time, remade.Series.LastObservedTime.Time)
	})
}
