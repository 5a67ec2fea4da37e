package events_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/events"
	"github.com/listwatch/informer/fakeapiserver"
)

// Two Recorders (two controllers in one binary) record about one object
// at one clock reading, each its own Event: both are created. A Recorder
// takes a 409 AlreadyExists as its own create having landed, so an
// Event's name must be unique beyond its Recorder. (Found by review:
// both Recorders named their first Event about web alike; the second's
// create met the first's Event, took it for its own, and wrote its
// repeats to that Event's series: its own Event was never created.)
func TestTwoRecordersRecordingAboutOneObjectAtOneInstantCreateTwoEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := fakeapiserver.New()
		require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
		mem := fakeapiserver.ServeInMemory(server)
		t.Cleanup(mem.Close)
		scheme := runtime.NewScheme()
		require.NoError(t, corev1.AddToScheme(scheme))
		ctx := t.Context()
		var recorders []*events.Recorder
		for _, name := range []string{"copier", "pruner"} {
			r, err := events.New(mem.Config(), events.Options{Controller: "example.com/" + name, Instance: name + "-0", Scheme: scheme})
			require.NoError(t, err)
			done := make(chan struct{})
			go func() { defer close(done); _ = r.Run(ctx) }()
			t.Cleanup(func() { <-done })
			recorders = append(recorders, r)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, recorders[0].Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		require.NoError(t, recorders[1].Eventf(cm, events.Normal, "Pruned", "Delete", "deleted 3 stale keys"))
		time.Sleep(time.Minute)
		synctest.Wait()
		var reasons []string
		for _, ev := range server.Objects(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}) {
			reasons = append(reasons, ev.Object["reason"].(string))
		}
		assert.ElementsMatch(t, []string{"SecretNotOurs", "Pruned"}, reasons,
			"one Event per Recorder: copier %+v, pruner %+v", recorders[0].Stats(), recorders[1].Stats())
	})
}
