package reflector_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// With the CBOR gate on, the real kube-apiserver holds numbers written
// in JSON that no int64 holds as float64s (18446744073709551615,
// -9223372036854775809), keeps 4611686018427387904.0 a float, and stores
// an object nested 9,000 deep; it refuses a CBOR integer beyond int64 (a
// uint64, a negative past -2^63) with 400, so it never serves one. A
// Source.CBOR ListerWatcher reads every such object, in a LIST and in a
// WATCH, exactly as a JSON one does: an informer whose server changes
// encoding sees nothing change.
func TestWithTheCBORGateOnBigNumbersAndDeepObjectsReadInCBORAsInJSON(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{FeatureGates: map[string]bool{"CBORServingAndStorage": true}})
	require.NoError(t, cp.InstallCRD(t.Context(), cborWidgets))
	ns := cp.Namespace(t)
	path := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", cborWidgets.Group, cborWidgets.Version, ns, cborWidgets.Plural)
	client, err := rest.HTTPClientFor(cp.Config())
	require.NoError(t, err)
	post := func(contentType string, body []byte) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, cp.Config().Host+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(out)
	}
	widget := func(name, spec string) []byte {
		return []byte(`{"apiVersion":"cbor.listwatch.dev/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":` + spec + `}`)
	}
	for name, spec := range map[string]string{
		"past-int64": `{"max": 18446744073709551615, "min": -18446744073709551616, "above": 9223372036854775808, "below": -9223372036854775809}`,
		"int64":      `{"max": 9223372036854775807, "min": -9223372036854775808}`,
		"floats":     `{"two62": 4611686018427387904.0, "two": 2.0, "e20": 1e20, "e21": 1e21, "e300": 1e300, "negzero": -0.0}`,
		"deep":       strings.Repeat(`{"n":`, 9000) + "1" + strings.Repeat("}", 9000),
	} {
		code, out := post("application/json", widget(name, spec))
		require.Equal(t, http.StatusCreated, code, "%s: %.300s", name, out)
	}
	for name, raw := range map[string][]byte{
		"uint64 max":  {0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"-(2^64)":     {0x3b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"-(2^63) - 1": {0x3b, 0x80, 0, 0, 0, 0, 0, 0, 0},
	} {
		body, err := cbor.Marshal(map[string]any{"apiVersion": "cbor.listwatch.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "refused"}, "spec": map[string]any{"v": cbor.RawMessage(raw)}})
		require.NoError(t, err)
		code, out := post("application/cbor", append([]byte{0xd9, 0xd9, 0xf7}, body...))
		assert.Equal(t, http.StatusBadRequest, code, "a CBOR integer %s is refused: %.300s", name, out)
	}

	read := func(cborFirst bool) (list, events []*unstructured.Unstructured) {
		lw, err := reflector.NewUnstructuredListerWatcher(cp.Config(), reflector.Source{
			Resource:  schema.GroupVersionResource{Group: cborWidgets.Group, Version: cborWidgets.Version, Resource: cborWidgets.Plural},
			Namespace: ns, CBOR: cborFirst,
		})
		require.NoError(t, err)
		list, _, err = lw.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err, "CBOR: %v", cborFirst)
		require.Len(t, list, 4)
		// resourceVersion 0: the watch begins with an ADDED event for
		// each object there is.
		timeout := int64(3)
		w, err := lw.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "0", TimeoutSeconds: &timeout})
		require.NoError(t, err)
		defer w.Stop()
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(*unstructured.Unstructured)
			require.True(t, ok, "%s: %v", ev.Type, ev.Object)
			events = append(events, obj)
			if len(events) == len(list) {
				break
			}
		}
		return list, events
	}
	jsonList, jsonEvents := read(false)
	cborList, cborEvents := read(true)
	assert.Equal(t, jsonList, cborList, "the LIST")
	assert.ElementsMatch(t, jsonEvents, cborEvents, "the WATCH")
}
