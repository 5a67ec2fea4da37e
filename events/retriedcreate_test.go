package events_test

import (
	"net/http"
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

// A create that lands but is answered 500 with a Retry-After (etcd
// committed it too slowly) is retried by the REST client, which meets
// its own Event: 409 AlreadyExists. The Recorder named the Event itself,
// so it takes the 409 as its create having landed and writes the repeat
// to its series: one Event, not two. (A review suspected a client-side
// retry of a POST could create a duplicate; this test refutes it.)
func TestACreateTheRESTClientRetriedAfterItLandedIsNotCreatedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{Status: http.StatusInternalServerError, RetryAfter: 1, Landed: true})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(5 * time.Second) // the retry, a second later, meets the Event
		synctest.Wait()
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, 1, stored(), "a retried create made a second Event: %+v", r.Stats())
		assert.Equal(t, int64(1), r.Stats().Updated, "the repeat was not written to the Event's series: %+v", r.Stats())
	})
}

// The same retried create, counted: the 409 its retry meets is the
// Recorder's own Event (its names are unique), so the Event was created,
// not refused, and the repeat's write finds it. (Found by review: Stats
// said Created 0, Refused 1, and a warning said the create "may have
// landed", of an Event the server had.)
func TestACreateTheRESTClientRetriedAfterItLandedIsCountedAsCreated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{Status: http.StatusInternalServerError, RetryAfter: 1, Landed: true})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Equal(t, 1, stored())
		assert.Equal(t, events.Stats{Created: 1, Recorded: 1}, r.Stats(), "the Event the server holds is not counted as created")
	})
}
