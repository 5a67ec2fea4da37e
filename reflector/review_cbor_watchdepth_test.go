package reflector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// watchOneInCBOR serves one ADDED event of obj as kube-apiserver's CBOR
// watch does (application/cbor-seq) and returns what a CBOR Source's
// Watch delivers.
func watchOneInCBOR(t *testing.T, obj *unstructured.Unstructured) []watch.Event {
	t.Helper()
	enc := cbor.NewSerializer(envelopeScheme, envelopeScheme)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw bytes.Buffer
		require.NoError(t, enc.Encode(obj, &raw))
		w.Header().Set("Content-Type", runtime.ContentTypeCBORSequence)
		require.NoError(t, enc.Encode(&metav1.WatchEvent{Type: string(watch.Added), Object: runtime.RawExtension{Raw: raw.Bytes()}}, w))
	}))
	t.Cleanup(srv.Close)
	lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, CBOR: true,
	})
	require.NoError(t, err)
	w, err := lw.Watch(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	var events []watch.Event
	for ev := range w.ResultChan() {
		events = append(events, ev)
	}
	return events
}

// A custom resource may hold any JSON its schema preserves
// (x-kubernetes-preserve-unknown-fields): nested 40 deep, or an array of
// 200,000 numbers, both well inside etcd's object size. The same object
// that the CBOR LIST reads (its decoder allows 10,000 levels and 2^31
// elements, as the JSON one does) must come through a CBOR WATCH too,
// as an ADDED event, not as a decoding ERROR that ends every watch.
func TestACBORWatchEventOfADeepOrLongCustomResourceIsDelivered(t *testing.T) {
	deep := map[string]any{"leaf": "x"}
	for range 40 {
		deep = map[string]any{"n": deep}
	}
	long := make([]any, 200_000)
	for i := range long {
		long[i] = int64(i % 7)
	}
	for name, spec := range map[string]any{"nested 40 deep": deep, "an array of 200,000": long} {
		t.Run(name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"name": "w", "namespace": "shop", "resourceVersion": "10"},
				"spec":     spec,
			}}
			events := watchOneInCBOR(t, obj)
			require.Len(t, events, 1)
			require.Equal(t, watch.Added, events[0].Type, "got %v", events[0].Object)
			assert.Equal(t, obj, events[0].Object)
		})
	}
}
