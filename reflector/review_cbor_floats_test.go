package reflector

import (
	"bytes"
	"math"
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

// kube-apiserver holds a number written in JSON that is too big for
// int64, or that has a fraction part or an exponent, as a float64, and
// writes a float64 in JSON in its shortest spelling, padded with zeros
// when whole ("4611686018427388000" for 2^62): that reads back as the
// int64 of that spelling when it fits (a different number from 2^62),
// and as a float64 when it does not (-2^63 is spelt
// "-9223372036854776000"). The CBOR path must give what the JSON path
// gives for every such float, or a relist that changes encoding sees the
// object changed.
func TestAWholeNumberFloatOfAnySizeReadsInCBORAsInJSON(t *testing.T) {
	floats := []any{
		float64(1 << 62), -float64(1 << 63), float64(1 << 63), float64(1<<53 + 2),
		float64(123456789012345678), 1e20, -1e20, 1e21, 1e300, math.Copysign(0, -1),
		float64(math.MaxUint64), -float64(math.MaxUint64), float64(2), 0.5,
	}
	list := widgetList(1)
	list.Items[0].Object["spec"] = map[string]any{"values": floats}
	var fromJSON, fromCBOR []*unstructured.Unstructured
	_, err := decodeJSONList(bytes.NewReader(encodeJSONList(t, list)), widgetListType, unstructuredJSONItem, collect(&fromJSON))
	require.NoError(t, err)
	_, err = decodeCBORList(bytes.NewReader(encodeCBORList(t, list)), widgetListType, unstructuredCBORItem, collect(&fromCBOR))
	require.NoError(t, err)
	assert.Equal(t, fromJSON[0].Object["spec"], fromCBOR[0].Object["spec"], "a LIST")

	obj := list.Items[0].DeepCopy()
	obj.SetResourceVersion("10")
	events := watchOneInCBOR(t, obj)
	require.Len(t, events, 1)
	assert.Equal(t, fromJSON[0].Object["spec"], events[0].Object.(*unstructured.Unstructured).Object["spec"], "a watch event")
}
