package reflector

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// encodeCBORList encodes list as kube-apiserver does in CBOR, with
// apimachinery's CBOR serializer: tag 55799, then the list as one map.
func encodeCBORList(t testing.TB, list *unstructured.UnstructuredList) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, cbor.NewSerializer(envelopeScheme, envelopeScheme).Encode(list, &buf))
	return buf.Bytes()
}

// variedWidgetList is widgetList with every kind of value a custom
// resource may hold: nested maps and arrays, floats, booleans, nulls,
// negative and large integers, and strings a JSON scanner could trip on.
func variedWidgetList(n int) *unstructured.UnstructuredList {
	list := widgetList(n)
	for i := range list.Items {
		list.Items[i].Object["status"] = map[string]any{
			"ratio": float64(i) + 0.5, "ready": i%2 == 0, "owner": nil, "delta": int64(-i),
			"big": int64(1) << 53, "tags": []any{"a", int64(i), map[string]any{"k": "v ]} ünï"}}, "empty": map[string]any{},
		}
	}
	return list
}

func TestACBORListDecodesToWhatTheAPIMachineryDecodesItTo(t *testing.T) {
	for _, n := range []int{0, 1, 5000} { // none, one, and several batches
		body := encodeCBORList(t, variedWidgetList(n))
		require.True(t, bytes.HasPrefix(body, selfDescribedCBOR))
		want := &unstructured.UnstructuredList{}
		_, _, err := cbor.NewSerializer(envelopeScheme, envelopeScheme).Decode(body, nil, want)
		require.NoError(t, err)

		var got []*unstructured.Unstructured
		meta, err := decodeCBORList(bytes.NewReader(body), widgetListType, unstructuredCBORItem, collect(&got))
		require.NoError(t, err)
		assert.Equal(t, metav1.ListMeta{ResourceVersion: "9"}, meta)
		require.Len(t, got, n)
		for i := range got {
			assert.Equal(t, &want.Items[i], got[i], "item %d, in order", i)
		}
	}
}

// The cache must not depend on the encoding the server chose: a list
// read in CBOR gives the objects the same list gives in JSON, down to
// the Go types of the values (int64, float64, bool, nil).
func TestACBORListGivesTheSameObjectsAsTheSameListInJSON(t *testing.T) {
	list := variedWidgetList(300)
	var fromJSON, fromCBOR []*unstructured.Unstructured
	jsonMeta, err := decodeJSONList(bytes.NewReader(encodeJSONList(t, list)), anyList, unstructuredJSONItem, collect(&fromJSON))
	require.NoError(t, err)
	cborMeta, err := decodeCBORList(bytes.NewReader(encodeCBORList(t, list)), anyList, unstructuredCBORItem, collect(&fromCBOR))
	require.NoError(t, err)
	assert.Equal(t, jsonMeta, cborMeta)
	assert.Equal(t, fromJSON, fromCBOR)
}

// An encoder may write maps and arrays of indefinite length (RFC 8949
// section 3.2.2), ended by a break: the list is read all the same.
func TestACBORListOfIndefiniteLengthIsRead(t *testing.T) {
	item := func(name string) []byte {
		b, err := direct.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name}})
		require.NoError(t, err)
		return b
	}
	text := func(s string) []byte { return append([]byte{0x60 | byte(len(s))}, s...) } // shorter than 24 bytes
	var body []byte
	body = append(body, selfDescribedCBOR...)
	body = append(body, 0xbf) // a map of indefinite length
	body = append(append(body, text("items")...), 0x9f)
	body = append(append(append(body, item("a")...), item("b")...), cborBreak)
	body = append(append(body, text("kind")...), text("WidgetList")...)
	body = append(append(body, text("apiVersion")...), text("example.com/v1")...)
	body = append(append(body, text("metadata")...), 0xa1)
	body = append(append(body, text("resourceVersion")...), text("7")...)
	body = append(body, cborBreak)

	var got []*unstructured.Unstructured
	meta, err := decodeCBORList(bytes.NewReader(body), widgetListType, unstructuredCBORItem, collect(&got))
	require.NoError(t, err)
	assert.Equal(t, "7", meta.ResourceVersion)
	require.Len(t, got, 2)
	assert.Equal(t, []string{"a", "b"}, []string{got[0].GetName(), got[1].GetName()})
}

// Every cut of a CBOR list, at every byte, is an error, never a shorter
// list (which would delete objects from the cache) and never a panic.
func TestACBORListCutAtAnyByteIsAnError(t *testing.T) {
	body := encodeCBORList(t, variedWidgetList(3))
	for n := range len(body) {
		var got []*unstructured.Unstructured
		_, err := decodeCBORList(bytes.NewReader(body[:n]), anyList, unstructuredCBORItem, collect(&got))
		require.Error(t, err, "cut after %d of %d bytes", n, len(body))
		assert.ErrorIs(t, err, ErrUnexpectedObject, "cut after %d bytes", n)
	}
}

func TestAHostileCBORListIsAnErrorNotACrashOrAHugeAllocation(t *testing.T) {
	deep := append(append([]byte{0xa1, 0x65, 'i', 't', 'e', 'm', 's', 0x81, 0xa1, 0x61, 'k'}, bytes.Repeat([]byte{0x81}, 1_000_000)...), 0x00)
	for name, body := range map[string][]byte{
		"nested a million deep":        deep,
		"a string claiming 2^64 bytes": append([]byte{0xbf, 0x65, 'i', 't', 'e', 'm', 's', 0x81, 0xa1, 0x7b}, bytes.Repeat([]byte{0xff}, 8)...),
		"a map claiming 2^63 entries":  append([]byte{0xbb, 0x80}, make([]byte, 7)...),
		"an array where a map belongs": {0x80},
		"a break out of place":         {0xff},
		"a reserved head":              {0xbf, 0x1c},
		"an item that is not a map":    {0xa1, 0x65, 'i', 't', 'e', 'm', 's', 0x81, 0x01},
		"JSON":                         []byte(`{"kind":"WidgetList","items":[]}`),
	} {
		t.Run(name, func(t *testing.T) {
			var got []*unstructured.Unstructured
			_, err := decodeCBORList(bytes.NewReader(body), anyList, unstructuredCBORItem, collect(&got))
			assert.ErrorIs(t, err, ErrUnexpectedObject)
			assert.Empty(t, got)
		})
	}
	// The scanner stops nesting at maxCBORDepth, before the recursion
	// that reads it grows without bound.
	var got []*unstructured.Unstructured
	_, err := decodeCBORList(bytes.NewReader(deep), anyList, unstructuredCBORItem, collect(&got))
	assert.ErrorContains(t, err, "nested more than")
}

func TestACBORListWhoseReadingFailsIsAReadingFailureNotABadObject(t *testing.T) {
	body := encodeCBORList(t, widgetList(100))
	cut := readErrors{io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(context.DeadlineExceeded))}
	var got []*unstructured.Unstructured
	_, err := decodeCBORList(cut, anyList, unstructuredCBORItem, collect(&got))
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the cause is kept")
	assert.NotErrorIs(t, err, ErrUnexpectedObject)
}

func TestACBORListOfTheWrongKindIsAnError(t *testing.T) {
	list := widgetList(2)
	list.SetKind("GadgetList")
	var got []*unstructured.Unstructured
	_, err := decodeCBORList(bytes.NewReader(encodeCBORList(t, list)), widgetListType, unstructuredCBORItem, collect(&got))
	assert.ErrorIs(t, err, ErrUnexpectedObject)
	assert.ErrorContains(t, err, fmt.Sprintf("kind %q", "GadgetList"))
}

func TestACBORListWithNullOrEmptyItemsIsEmpty(t *testing.T) {
	for _, items := range []any{nil, []any{}} {
		body, err := direct.Marshal(map[string]any{"kind": "WidgetList", "apiVersion": "example.com/v1", "metadata": map[string]any{"resourceVersion": "9"}, "items": items})
		require.NoError(t, err)
		var got []*unstructured.Unstructured
		meta, err := decodeCBORList(bytes.NewReader(append(selfDescribedCBOR, body...)), widgetListType, unstructuredCBORItem, collect(&got))
		require.NoError(t, err, "items %#v", items)
		assert.Empty(t, got)
		assert.Equal(t, "9", meta.ResourceVersion)
	}
}

func FuzzDecodeCBORList(f *testing.F) {
	f.Add(encodeCBORList(f, variedWidgetList(2)))
	f.Add(encodeCBORList(f, widgetList(0)))
	f.Fuzz(func(t *testing.T, body []byte) {
		var got []*unstructured.Unstructured
		_, err := decodeCBORList(bytes.NewReader(body), anyList, unstructuredCBORItem, collect(&got))
		if err == nil {
			return
		}
		assert.ErrorIs(t, err, ErrUnexpectedObject, "every failure says the answer was bad")
	})
}

// A custom resource may nest as deep as the API server's decoders allow
// (10,000 levels, JSON's and CBOR's alike); the server stores one nested
// 9,000 deep and serves it
// (TestWithTheCBORGateOnBigNumbersAndDeepObjectsReadInCBORAsInJSON). Its CBOR LIST must be read as its JSON LIST
// and its CBOR watch event are, not fail whole: a list that fails is
// retried forever, and the informer never syncs.
func TestACBORListOfADeeplyNestedCustomResourceIsReadAsItsJSONListIs(t *testing.T) {
	deep := map[string]any{"leaf": "x"}
	for range 9000 {
		deep = map[string]any{"n": deep}
	}
	list := widgetList(2)
	list.Items[1].Object["spec"] = deep
	var fromJSON, fromCBOR []*unstructured.Unstructured
	_, err := decodeJSONList(bytes.NewReader(encodeJSONList(t, list)), widgetListType, unstructuredJSONItem, collect(&fromJSON))
	require.NoError(t, err, "the JSON list")
	_, err = decodeCBORList(bytes.NewReader(encodeCBORList(t, list)), widgetListType, unstructuredCBORItem, collect(&fromCBOR))
	require.NoError(t, err, "the CBOR list")
	assert.Equal(t, fromJSON, fromCBOR)
}

// A built-in resource's CBOR list names its kind before its items and
// its apiVersion after them (keys shortest first), and its items name
// neither: they are read as they come, as of the version asked, and a
// list that turns out to be in another version is an error, not a list
// of objects named after the wrong version.
func TestACBORListsItemsAreReadAsOfTheVersionAskedAndTheListMustBeInIt(t *testing.T) {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "metadata": map[string]any{"resourceVersion": "7"}}}
	for i := range 3 {
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("cm-%d", i), "resourceVersion": "7"}}})
	}
	body := encodeCBORList(t, list)
	require.Less(t, bytes.Index(body, []byte("items")), bytes.Index(body, []byte("apiVersion")), "the items come before the list's apiVersion")

	var got []*unstructured.Unstructured
	_, err := decodeCBORList(bytes.NewReader(body), metav1.TypeMeta{APIVersion: "v1"}, unstructuredCBORItem, collect(&got))
	require.NoError(t, err)
	require.Len(t, got, 3)
	assert.Equal(t, "v1", got[0].GetAPIVersion())
	assert.Equal(t, "ConfigMap", got[0].GetKind())

	_, err = decodeCBORList(bytes.NewReader(body), metav1.TypeMeta{APIVersion: "apps/v1"}, unstructuredCBORItem, collect(&got))
	require.ErrorIs(t, err, ErrUnexpectedObject)
	require.ErrorContains(t, err, `apiVersion "v1", want "apps/v1"`)

	// A server that names no apiVersion for its list (not kube-apiserver)
	// is read as before the version asked was checked.
	delete(list.Object, "apiVersion")
	got = nil
	_, err = decodeCBORList(bytes.NewReader(encodeCBORList(t, list)), metav1.TypeMeta{APIVersion: "v1"}, unstructuredCBORItem, collect(&got))
	require.NoError(t, err)
	require.Len(t, got, 3)
}
