package events_test

import (
	"net/http"
	"strings"
	"sync/atomic"
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

// lostFirstCreate serves Events (installed as a CRD) with fault for the
// first create, and starts a Recorder on it; it returns the server, the
// Recorder and the Events the server holds.
func lostFirstCreate(t *testing.T, fault fakeapiserver.Fault) (*events.Recorder, func() int) {
	t.Helper()
	server := fakeapiserver.New()
	require.NoError(t, server.InstallCRD(fakeapiserver.CRD{Group: "events.k8s.io", Version: "v1", Kind: "Event", Plural: "events"}))
	var posts atomic.Int32
	h := fakeapiserver.WithFaults(server, func(r *http.Request) fakeapiserver.Fault {
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/events") && posts.Add(1) == 1 {
			return fault
		}
		return fakeapiserver.Fault{}
	})
	mem := fakeapiserver.ServeInMemory(h)
	t.Cleanup(mem.Close)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	r, err := events.New(mem.Config(), events.Options{Controller: "example.com/lost", Instance: "lost-0", Scheme: scheme})
	require.NoError(t, err)
	ctx := t.Context()
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { <-done })
	stored := func() int {
		return len(server.Objects(schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}))
	}
	return r, stored
}

// TestAnEventWhoseCreateAnswerWasLostIsNotCreatedTwice: the first create
// lands, but its answer is lost (the connection cut after the server
// acted). The Recorder named the Event itself, so it takes it as created
// and writes the next occurrence to its series: one Event, not two.
// Found by an adversarial hunt: the series was forgotten, and the next
// occurrence created a second Event.
func TestAnEventWhoseCreateAnswerWasLostIsNotCreatedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{AnswerLost: true})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		synctest.Wait()
		require.Equal(t, int64(1), r.Stats().Refused)
		require.Equal(t, 1, stored(), "the lost answer's create landed")

		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute) // the series update is due
		synctest.Wait()
		require.Equal(t, int64(1), r.Stats().Updated, "the repeat was not written to the series: %+v", r.Stats())
		assert.Equal(t, 1, stored(), "two Events for one series: %+v", r.Stats())
	})
}

// TestAnEventWhoseCreateWasCutBeforeItLandedIsCreatedByTheNextOccurrence:
// a create cut before the server saw it is taken as created too (the
// Recorder cannot tell); the next occurrence's series update finds no
// Event and creates it.
func TestAnEventWhoseCreateWasCutBeforeItLandedIsCreatedByTheNextOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, stored := lostFirstCreate(t, fakeapiserver.Fault{Drop: true})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		synctest.Wait()
		require.Equal(t, int64(1), r.Stats().Refused)
		require.Zero(t, stored(), "the cut create never landed")

		require.NoError(t, r.Eventf(cm, events.Warning, "SecretNotOurs", "Create", "secret web exists"))
		time.Sleep(time.Minute) // the series update is due, finds no Event, makes it
		synctest.Wait()
		require.Equal(t, 1, stored(), "the next occurrence made no Event: %+v", r.Stats())
	})
}
