package events

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Against a real API server: three occurrences recorded before Run are
// created as one Event with a series of three, two more are written to
// its series, and the Event is what `kubectl describe` reads: an Event of
// core/v1 about the ConfigMap, with the count.
func TestRepeatedEventsReachARealAPIServerAsOneEventWithASeries(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	core, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}}
	require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Into(cm))

	r, err := New(cp.Config(), Options{Controller: "example.com/secret-copier", Instance: "copier-0", Scheme: testScheme(t)})
	require.NoError(t, err)
	r.flush = 100 * time.Millisecond // not 10 s: this test waits in real time
	for range 3 {
		require.NoError(t, r.Eventf(cm, Warning, "SecretNotOurs", "Create", "secret %s exists and this ConfigMap does not control it", cm.Name))
	}
	runRecorder(t, r)
	require.Eventually(t, func() bool { return r.Stats().Created == 1 }, time.Minute, 10*time.Millisecond)
	for range 2 {
		require.NoError(t, r.Eventf(cm, Warning, "SecretNotOurs", "Create", "secret %s exists and this ConfigMap does not control it", cm.Name))
	}
	// The two may go out in one patch or, when the first was already
	// due as the fourth was recorded (a slow machine), in two: wait for
	// the server to count five, and the recorder one patch at least, not
	// for a number of patches.
	var events corev1.EventList
	require.Eventually(t, func() bool {
		events = corev1.EventList{}
		err := core.Get().Namespace(ns).Resource("events").Do(t.Context()).Into(&events)
		return err == nil && len(events.Items) == 1 && events.Items[0].Series != nil && events.Items[0].Series.Count == 5 && r.Stats().Updated >= 1
	}, time.Minute, 10*time.Millisecond, "one Event whose series counts five occurrences")
	stats := r.Stats()
	assert.Contains(t, []int64{1, 2}, stats.Updated, "the series is written in one patch or two")
	stats.Updated = 0
	assert.Equal(t, Stats{Created: 1, Repeats: 4, Recorded: 5}, stats)

	require.Len(t, events.Items, 1, "one Event for five occurrences")
	ev := events.Items[0]
	assert.Equal(t, "Warning", ev.Type)
	assert.Equal(t, "SecretNotOurs", ev.Reason)
	assert.Equal(t, "Create", ev.Action)
	assert.Equal(t, "secret web exists and this ConfigMap does not control it", ev.Message)
	assert.Equal(t, corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: ns, Name: "web", UID: cm.UID, ResourceVersion: cm.ResourceVersion}, ev.InvolvedObject)
	assert.Equal(t, "example.com/secret-copier", ev.ReportingController)
	assert.Equal(t, "copier-0", ev.ReportingInstance)
	require.NotNil(t, ev.Series)
	assert.Equal(t, int32(5), ev.Series.Count)
}
