package reflector

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkListEncoding reads one page of 10,000 custom resources (about
// 1 KiB of spec each) in parts, once as JSON and once as CBOR, the two
// answers kube-apiserver gives a Source.CBOR reflector with its
// CBORServingAndStorage gate off and on. Two shapes of spec: one 1 KiB
// string (as BenchmarkJSONList), and 48 small fields (integers, booleans,
// short strings, a nested map) of about 1 KiB in JSON. Compare the
// encodings with benchstat -col /enc; B/s is of each encoding's own body,
// so compare sec/op.
func BenchmarkListEncoding(b *testing.B) {
	for _, shape := range []string{"string", "fields"} {
		list := widgetList(10_000)
		for i := range list.Items {
			list.Items[i].Object["spec"] = benchSpec(shape, i)
		}
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
			b.Run("shape="+shape+"/enc="+enc.name, func(b *testing.B) {
				b.SetBytes(int64(len(enc.body)))
				for b.Loop() {
					n := 0
					require.NoError(b, enc.decode(enc.body, func(part []*unstructured.Unstructured) error {
						n += len(part)
						return nil
					}))
					require.Equal(b, 10_000, n)
				}
				b.ReportMetric(float64(len(enc.body)), "body-bytes")
			})
		}
	}
}

// benchSpec is widget i's spec of about 1 KiB, in one of the two shapes.
func benchSpec(shape string, i int) map[string]any {
	if shape == "string" {
		return map[string]any{"data": strings.Repeat(fmt.Sprint(i%10), 1024)}
	}
	spec := map[string]any{}
	for f := range 16 {
		spec[fmt.Sprintf("count%02d", f)] = int64(i * f)
		spec[fmt.Sprintf("enabled%02d", f)] = f%2 == 0
		spec[fmt.Sprintf("name%02d", f)] = fmt.Sprintf("value-%d-%d", i, f)
	}
	spec["nested"] = map[string]any{"replicas": int64(3), "image": "registry.example.com/widget:v1", "ports": []any{int64(80), int64(443)}}
	return spec
}
