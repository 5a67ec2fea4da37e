package events

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/testenv"
)

// A ConfigMap may have a name of 250 characters, and an Event's name,
// the object's name and a suffix, may have 253: the prefix is cut, so
// the API server creates the Event. Against a real API server. (Found by
// review: Eventf accepted it and the server refused it.)
func TestAnEventAboutAnObjectWithALongNameIsCreated(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	core, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("a", 250), Namespace: ns}}
	require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Into(cm), "a valid ConfigMap")

	r, err := New(cp.Config(), Options{Controller: "example.com/secret-copier", Instance: "copier-0", Scheme: testScheme(t)})
	require.NoError(t, err)
	runRecorder(t, r)
	err = r.Eventf(cm, Warning, "SecretNotOurs", "Create", "secret exists")
	if err != nil {
		return // refused up front, as promised
	}
	require.Eventually(t, func() bool { s := r.Stats(); return s.Created+s.Refused == 1 }, time.Minute, 10*time.Millisecond)
	assert.Equal(t, int64(1), r.Stats().Created, "Eventf returned nil, and the API server refused the Event: %+v", r.Stats())
}

// patchSink creates every Event, and answers the series patches with
// what patchErr says, after release is closed.
type patchSink struct {
	mu       sync.Mutex
	created  []*eventsv1.Event
	patched  []eventsv1.EventSeries
	release  chan struct{}
	patchErr error
}

func (p *patchSink) create(_ context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, ev.DeepCopy())
	return ev, nil
}

func (p *patchSink) patchSeries(ctx context.Context, _, _ string, s eventsv1.EventSeries) error {
	select {
	case <-p.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.patchErr != nil {
		return p.patchErr
	}
	p.patched = append(p.patched, s)
	return nil
}

// The Event expired (404) while its series was being written, and an
// occurrence came meanwhile: that occurrence is created as a new Event,
// not lost. (Found by review: it was lost.)
func TestAnOccurrenceRecordedWhileAnExpiredEventsSeriesIsWrittenMakesANewEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &patchSink{release: make(chan struct{}),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "web.1")}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(10 * time.Second) // the series update is due, sent, and hangs
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // while it hangs
		close(sink.release)                                                               // 404: the Event is gone
		time.Sleep(time.Minute)
		synctest.Wait()
		sink.mu.Lock()
		created := len(sink.created)
		sink.mu.Unlock()
		s := r.Stats()
		assert.Equal(t, 2, created, "an occurrence after the Event expired makes a new Event: %+v", s)
	})
}

// An object changed by anyone between two occurrences (a new
// resourceVersion) is the same object: one Event with a series. (Found
// by review: the resourceVersion was part of the series' key.)
func TestTheSameObjectAtANewResourceVersionIsStillOneSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "p1", ResourceVersion: "10"}}
		require.NoError(t, r.Eventf(pod, Warning, "VolumeNotOurs", "Attach", "volume data is claimed by another controller"))
		time.Sleep(time.Second)
		pod = pod.DeepCopy()
		pod.ResourceVersion = "11" // the kubelet updated its status
		require.NoError(t, r.Eventf(pod, Warning, "VolumeNotOurs", "Attach", "volume data is claimed by another controller"))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, "created [1], patched [2]", sink.writes(), "one object, one refusal, 1 s apart: one Event with a series")
	})
}

// uniqueSink refuses a create whose name exists, as the API server does.
type uniqueSink struct {
	fakeSink
	names map[string]bool
}

func (u *uniqueSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	u.mu.Lock()
	dup := u.names[ev.Namespace+"/"+ev.Name]
	u.names[ev.Namespace+"/"+ev.Name] = true
	u.mu.Unlock()
	if dup {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, ev.Name)
	}
	return u.fakeSink.create(ctx, ev)
}

// Two Events about one object at one clock reading get two names, as
// the API server requires. (Found by review: they got one.)
func TestTwoEventsAboutOneObjectAtOneInstantAreBothCreated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &uniqueSink{names: map[string]bool{}}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "secret web belongs to someone else"))
		require.NoError(t, r.Eventf(web, Normal, "Synced", "Update", "in sync"))
		synctest.Wait()
		assert.Equal(t, int64(2), r.Stats().Created, "%+v", r.Stats())
	})
}
