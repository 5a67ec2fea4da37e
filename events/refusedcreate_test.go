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

// The first create waits 5 s in the API server's queue (API Priority and
// Fairness) and is refused, 429; a repeat is recorded while it waits. The
// refused write is not retried, but the repeat was in no write: like an
// occurrence recorded after the refusal, it is created anew. (Found by
// review: it was dropped with the series, neither sent, nor counted, nor
// logged, though Eventf accepted it.)
func TestAnOccurrenceRecordedWhileARefusedCreateWasInFlightIsCreatedNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{Latency: 5 * time.Second, Status: http.StatusTooManyRequests})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Second)
		synctest.Wait() // the create is in flight
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, 1, stored(), "the occurrence recorded while the refused create was in flight was never written: %+v", r.Stats())
		assert.Equal(t, events.Stats{Created: 1, Repeats: 1, Refused: 1, Recorded: 2}, r.Stats())
	})
}
