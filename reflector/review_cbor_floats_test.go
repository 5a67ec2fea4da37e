package reflector

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// A custom resource written with "replicas": 2.0 is held by the API
// server as float64(2) (JSON's decoder keeps a number with a fraction
// part as a float). In JSON the server writes it as 2, which reads back
// as int64(2); in CBOR it writes a float. A Source.CBOR informer whose
// server answers JSON to one LIST and CBOR to the next (the gate turned
// on across a restart, apiservers of an HA control plane that differ)
// must read the same object both times, or every such object is a
// false update on the relist.
func TestTheSameObjectListedInJSONThenInCBORIsEqual(t *testing.T) {
	list := widgetList(1)
	list.Items[0].Object["spec"] = map[string]any{"replicas": float64(2), "ratio": 0.5, "zero": float64(0)}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			_, _ = w.Write(encodeJSONList(t, list))
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeCBOR)
		_, _ = w.Write(encodeCBORList(t, list))
	}))
	t.Cleanup(srv.Close)
	lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, CBOR: true,
	})
	require.NoError(t, err)
	var reads [2][]*unstructured.Unstructured
	for i := range reads {
		reads[i], _, err = lw.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
	}
	assert.Equal(t, reads[0], reads[1], "read in JSON, then in CBOR")
}

// The same for a watch event in CBOR: it must carry what a JSON watch
// event of that object carries.
func TestAWholeNumberFloatInACBORWatchEventReadsAsJSONReadsIt(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "shop", "resourceVersion": "10"},
		"spec":     map[string]any{"replicas": float64(2), "list": []any{float64(3), 0.25}},
	}}
	events := watchOneInCBOR(t, obj)
	require.Len(t, events, 1)
	got := events[0].Object.(*unstructured.Unstructured)
	assert.Equal(t, map[string]any{"replicas": int64(2), "list": []any{int64(3), 0.25}}, got.Object["spec"])
}
