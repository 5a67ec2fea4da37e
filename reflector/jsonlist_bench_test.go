package reflector

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkJSONList compares reading a page of 10,000 custom resources
// (about 1 KiB of spec each) in parts with what the API machinery does:
// the whole body, then one UnstructuredList holding every item. Compare
// the two rows' B/op and ns/op with benchstat.
func BenchmarkJSONList(b *testing.B) {
	list := widgetList(10_000)
	for i := range list.Items {
		list.Items[i].Object["spec"] = map[string]any{"data": strings.Repeat(fmt.Sprint(i%10), 1024)}
	}
	body := encodeJSONList(b, list)
	b.Run("in-parts", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			n := 0
			_, err := decodeJSONList(bytes.NewReader(body), anyList, unstructuredJSONItem, func(part []*unstructured.Unstructured) error {
				n += len(part)
				return nil
			})
			require.NoError(b, err)
			require.Equal(b, 10_000, n)
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var whole bytes.Buffer
			_, err := whole.ReadFrom(bytes.NewReader(body)) // what rest's Do does first
			require.NoError(b, err)
			got := &unstructured.UnstructuredList{}
			_, _, err = unstructured.UnstructuredJSONScheme.Decode(whole.Bytes(), nil, got)
			require.NoError(b, err)
			require.Len(b, got.Items, 10_000)
		}
	})
	b.Run("in-parts-typed", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			_, err := decodeJSONList(bytes.NewReader(body), widgetListType, typedJSONItem[*metav1.PartialObjectMetadata]("Widget"), func([]*metav1.PartialObjectMetadata) error { return nil })
			require.NoError(b, err)
		}
	})
}
