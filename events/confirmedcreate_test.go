package events_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// The first create lands but its answer is lost: the Recorder takes the
// Event as created, not knowing. The repeat's series update finds it, so
// now it knows: the Event was created, and Stats.Created says so, as it
// does of a create whose retry met its own Event (409). (Found by
// review: Created stayed 0 beside Updated 1, of an Event the server
// holds and the Recorder has written to.)
func TestACreateWhoseAnswerWasLostIsCountedAsCreatedOnceItsSeriesUpdateFindsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{AnswerLost: true})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		synctest.Wait()
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute) // the series update is due, and finds the Event
		synctest.Wait()
		require.Equal(t, 1, stored())
		assert.Equal(t, events.Stats{Created: 1, Updated: 1, Repeats: 1, Refused: 1, Recorded: 2}, r.Stats(),
			"the Event the series update found is not counted as created")
	})
}
