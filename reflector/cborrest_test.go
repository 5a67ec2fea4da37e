package reflector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// widgetServer answers a LIST of widgets and a WATCH of three events (an
// ADDED, a BOOKMARK and an ERROR with a 410 Status) in CBOR, as
// kube-apiserver with CBORServingAndStorage does, or, when !cbor, in
// JSON, as it does without the gate. It records the Accept headers.
type widgetServer struct {
	t    *testing.T
	cbor bool

	mu      sync.Mutex
	accepts []string // guarded by mu
}

func (s *widgetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.accepts = append(s.accepts, r.Header.Get("Accept"))
	s.mu.Unlock()
	added := widgetList(3).Items[2]
	added.SetResourceVersion("10")
	bookmark := unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"resourceVersion": "11"}}}
	gone := apierrors.NewResourceExpired("too old resource version: 1 (11)").ErrStatus
	gone.APIVersion, gone.Kind = "v1", "Status"
	if r.URL.Query().Get("watch") != "true" {
		list := widgetList(2)
		if s.cbor {
			w.Header().Set("Content-Type", runtime.ContentTypeCBOR)
			_, _ = w.Write(encodeCBORList(s.t, list))
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeJSON)
		_, _ = w.Write(encodeJSONList(s.t, list))
		return
	}
	events := []struct {
		typ watch.EventType
		obj runtime.Object
	}{{watch.Added, &added}, {watch.Bookmark, &bookmark}, {watch.Error, &gone}}
	var enc runtime.Encoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, envelopeScheme, envelopeScheme, json.SerializerOptions{})
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	if s.cbor {
		enc = cbor.NewSerializer(envelopeScheme, envelopeScheme)
		w.Header().Set("Content-Type", runtime.ContentTypeCBORSequence)
	}
	for _, ev := range events {
		var obj bytes.Buffer
		require.NoError(s.t, enc.Encode(ev.obj, &obj))
		require.NoError(s.t, enc.Encode(&metav1.WatchEvent{Type: string(ev.typ), Object: runtime.RawExtension{Raw: obj.Bytes()}}, w))
	}
}

// listAndWatch lists and watches widgets with src.CBOR set, from a
// widgetServer answering in CBOR or not, and returns what it read.
func listAndWatch(t *testing.T, serveCBOR bool) (*widgetServer, []*unstructured.Unstructured, metav1.ListMeta, []watch.Event) {
	s := &widgetServer{t: t, cbor: serveCBOR}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, CBOR: true,
	})
	require.NoError(t, err)
	items, meta, err := lw.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	w, err := lw.Watch(t.Context(), metav1.ListOptions{ResourceVersion: meta.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	var events []watch.Event
	for ev := range w.ResultChan() { // the server ends the stream after three events
		events = append(events, ev)
	}
	return s, items, meta, events
}

// checkWidgets checks what listAndWatch read: the same whichever
// encoding the server chose.
func checkWidgets(t *testing.T, items []*unstructured.Unstructured, meta metav1.ListMeta, events []watch.Event) {
	t.Helper()
	require.Len(t, items, 2)
	assert.Equal(t, &widgetList(2).Items[1], items[1])
	assert.Equal(t, "9", meta.ResourceVersion)
	require.Len(t, events, 3)
	assert.Equal(t, watch.Added, events[0].Type)
	require.IsType(t, &unstructured.Unstructured{}, events[0].Object)
	added := events[0].Object.(*unstructured.Unstructured)
	assert.Equal(t, "w-2", added.GetName())
	assert.Equal(t, "10", added.GetResourceVersion())
	assert.Equal(t, map[string]any{"size": int64(2), "colour": `"blue" ]}`}, added.Object["spec"], "integers stay int64, as from JSON")
	assert.Equal(t, watch.Bookmark, events[1].Type)
	assert.Equal(t, "11", events[1].Object.(*unstructured.Unstructured).GetResourceVersion())
	assert.Equal(t, watch.Error, events[2].Type)
	assert.True(t, isExpired(statusError(events[2].Object)), "an ERROR event's Status is read: %v", statusError(events[2].Object))
}

func TestACBORSourceListsAndWatchesInCBORWhenTheServerOffersIt(t *testing.T) {
	s, items, meta, events := listAndWatch(t, true)
	checkWidgets(t, items, meta, events)
	assert.Equal(t, []string{cborAccept, cborAccept}, s.accepts, "CBOR first, JSON as the fallback, for the LIST and the WATCH")
}

func TestACBORSourceTakesJSONFromAServerThatDoesNotOfferCBOR(t *testing.T) {
	_, items, meta, events := listAndWatch(t, false)
	checkWidgets(t, items, meta, events)
}

func TestWithoutSourceCBORACBORAnswerIsRefused(t *testing.T) {
	srv := httptest.NewServer(&widgetServer{t: t, cbor: true})
	t.Cleanup(srv.Close)
	lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
	})
	require.NoError(t, err)
	_, _, err = lw.List(t.Context(), metav1.ListOptions{})
	assert.ErrorIs(t, err, ErrUnexpectedObject)
	assert.ErrorContains(t, err, "CBOR, which was not asked for")
}

func TestSourceCBORIsRefusedWhereItDoesNotApply(t *testing.T) {
	src := Source{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, CBOR: true}
	_, err := NewMetadataListerWatcher(&rest.Config{Host: "http://127.0.0.1:1"}, src)
	assert.ErrorContains(t, err, "Source.CBOR is for unstructured objects")
	_, err = NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: "http://127.0.0.1:1"}, scheme(t), src)
	assert.ErrorContains(t, err, "Source.CBOR is for unstructured objects")
}
