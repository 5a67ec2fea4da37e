package reflector

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkHeldHeapPerObject reads 10,000 custom resources shaped as a
// real kube-apiserver answers the ladder's Widgets (eight metadata
// fields, two labels, a managedFields entry, about 1 KiB of spec), once
// as JSON and once as CBOR, keeps what the list decoders handed over, as
// a cache would, and reports the live heap that holds them, per object
// (held-B/object, after two collections). Compare the encodings with
// benchstat -col /enc: an object should cost the same whichever way it
// came (TestJSONNumbersWritesNothingIntoAnObjectWithNoFloat).
func BenchmarkHeldHeapPerObject(b *testing.B) {
	const n = 10_000
	list := servedWidgetList(n)
	for _, enc := range []struct {
		name   string
		body   []byte
		decode func([]byte, func([]*unstructured.Unstructured) error) error
	}{
		{"json", encodeJSONList(b, list), func(body []byte, part func([]*unstructured.Unstructured) error) error {
			_, err := decodeJSONList(bytes.NewReader(body), anyList, unstructuredJSONItem, part)
			return err
		}},
		{"cbor", encodeCBORList(b, list), func(body []byte, part func([]*unstructured.Unstructured) error) error {
			_, err := decodeCBORList(bytes.NewReader(body), anyList, unstructuredCBORItem, part)
			return err
		}},
	} {
		b.Run("enc="+enc.name, func(b *testing.B) {
			var held float64
			for b.Loop() {
				kept := make([]*unstructured.Unstructured, 0, n)
				before := liveHeap()
				require.NoError(b, enc.decode(enc.body, func(part []*unstructured.Unstructured) error {
					kept = append(kept, part...)
					return nil
				}))
				held = (liveHeap() - before) / n
				require.Len(b, kept, n)
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(held, "held-B/object")
		})
	}
}

// servedWidgetList is n Widgets with the fields kube-apiserver gives a
// custom resource: uid, resourceVersion, generation, creationTimestamp
// and a managedFields entry beside the name, namespace and labels, and a
// spec of one ~1 KiB string.
func servedWidgetList(n int) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{"resourceVersion": "9"},
	}}
	for i := range n {
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{
				"name": fmt.Sprintf("widget-%07d", i), "namespace": fmt.Sprintf("ns-%d", i%10),
				"uid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "resourceVersion": fmt.Sprint(1000 + i),
				"generation": int64(1), "creationTimestamp": "2026-12-05T12:00:00Z",
				"labels": map[string]any{"app": fmt.Sprintf("app-%d", i%100), "tier": "backend"},
				"managedFields": []any{map[string]any{
					"manager": "scale", "operation": "Update", "apiVersion": "example.com/v1",
					"time": "2026-12-05T12:00:00Z", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}, "f:app": map[string]any{}, "f:tier": map[string]any{}}}, "f:spec": map[string]any{".": map[string]any{}, "f:payload": map[string]any{}}},
				}},
			},
			"spec": map[string]any{"payload": strings.Repeat(fmt.Sprint(i%10), 900)},
		}})
	}
	return list
}

// liveHeap is the heap in use after two full collections.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}
