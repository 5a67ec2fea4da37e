package reflector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// encodeJSONList encodes list as kube-apiserver does in JSON: a built-in
// type's list with its kind first, an UnstructuredList (a custom
// resource's) with its keys sorted, items before kind.
func encodeJSONList(t testing.TB, list runtime.Object) []byte {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	var buf bytes.Buffer
	if _, ok := list.(*unstructured.UnstructuredList); ok {
		require.NoError(t, unstructured.UnstructuredJSONScheme.Encode(list, &buf))
	} else {
		enc := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{StreamingCollectionsEncoding: true})
		require.NoError(t, enc.Encode(list, &buf))
	}
	return buf.Bytes()
}

// awkwardConfigMapList is configMapList with values a scanner could trip
// on: brackets, quotes, backslashes and escapes inside strings.
func awkwardConfigMapList(n int) *corev1.ConfigMapList {
	list := configMapList(n)
	for i := range list.Items {
		list.Items[i].Data["tricky"] = fmt.Sprintf(`{"a":[%d]} \"quoted\" \\ back\slash ] } ünï "`, i)
		list.Items[i].Annotations = map[string]string{"x": strings.Repeat(`\`, i%4) + "}"}
	}
	return list
}

func TestAJSONListDecodesToWhatTheAPIMachineryDecodesItTo(t *testing.T) {
	for _, n := range []int{0, 1, 5000} { // none, one, and several batches
		body := encodeJSONList(t, awkwardConfigMapList(n))
		want := &corev1.ConfigMapList{}
		codecs := serializer.NewCodecFactory(scheme(t))
		require.NoError(t, runtime.DecodeInto(codecs.UniversalDeserializer(), body, want))

		var got []*corev1.ConfigMap
		meta, err := decodeJSONList(bytes.NewReader(body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
		require.NoError(t, err)
		assert.Equal(t, want.ListMeta, meta)
		require.Len(t, got, n)
		for i := range got {
			assert.Equal(t, &want.Items[i], got[i], "item %d, in order", i)
		}
	}
}

func TestAJSONListIsHandedOverInPartsAsItIsRead(t *testing.T) {
	body := encodeJSONList(t, configMapList(20_000)) // about 3 MB: a dozen batches
	parts, seen := 0, 0
	_, err := decodeJSONList(bytes.NewReader(body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), func(part []*corev1.ConfigMap) error {
		for _, item := range part {
			require.Equal(t, fmt.Sprintf("cm-%d", seen), item.Name, "in list order")
			seen++
		}
		parts++
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 20_000, seen)
	assert.Greater(t, parts, 5, "a part a batch, not one at the end")
}

func TestACustomResourceListWhoseKindComesAfterItsItemsDecodes(t *testing.T) {
	list := widgetList(3)
	body := encodeJSONList(t, list)
	require.Less(t, bytes.Index(body, []byte(`"items"`)), bytes.Index(body, []byte(`"kind":"WidgetList"`)), "the server's order for a custom resource")

	var typed []*metav1.PartialObjectMetadata // any Go type that names its kind works the same
	_, err := decodeJSONList(bytes.NewReader(body), widgetListType, typedJSONItem[*metav1.PartialObjectMetadata]("Widget"), collect(&typed))
	require.NoError(t, err)
	require.Len(t, typed, 3)
	assert.Equal(t, "w-2", typed[2].Name)

	var u []*unstructured.Unstructured
	meta, err := decodeJSONList(bytes.NewReader(body), anyList, unstructuredJSONItem, collect(&u))
	require.NoError(t, err)
	assert.Equal(t, "9", meta.ResourceVersion)
	want := &unstructured.UnstructuredList{}
	_, _, err = unstructured.UnstructuredJSONScheme.Decode(body, nil, want)
	require.NoError(t, err) // compare with the API machinery
	for i := range u {
		assert.Equal(t, &want.Items[i], u[i])
	}
}

func TestAnUnstructuredItemWithoutAKindTakesTheListsKind(t *testing.T) {
	body := encodeJSONList(t, configMapList(2)) // a built-in list: kind first, items without one
	var u []*unstructured.Unstructured
	_, err := decodeJSONList(bytes.NewReader(body), anyList, unstructuredJSONItem, collect(&u))
	require.NoError(t, err)
	want := &unstructured.UnstructuredList{}
	_, _, err = unstructured.UnstructuredJSONScheme.Decode(body, nil, want)
	require.NoError(t, err)
	require.Len(t, u, 2)
	for i := range u {
		assert.Equal(t, "ConfigMap", u[i].GetKind())
		assert.Equal(t, "v1", u[i].GetAPIVersion())
		assert.Equal(t, &want.Items[i], u[i])
	}

	late := []byte(`{"items":[{"metadata":{"name":"a"}}],"kind":"ConfigMapList","apiVersion":"v1","metadata":{}}`)
	_, err = decodeJSONList(bytes.NewReader(late), anyList, unstructuredJSONItem, collect(&u))
	assert.ErrorIs(t, err, ErrUnexpectedObject, "an item without a kind before the list's kind cannot be given one")
	assert.ErrorContains(t, err, "list item 0 names no kind")
}

func TestAJSONAnswerThatIsNotTheListAskedForIsAnError(t *testing.T) {
	ok := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`
	cases := map[string]struct{ body, want string }{
		"another kind":              {`{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[{}]}`, `kind "SecretList", want "ConfigMapList"`},
		"a Status":                  {`{"kind":"Status","apiVersion":"v1","status":"Failure"}`, `kind "Status"`},
		"no kind":                   {`{"items":[]}`, "names no kind"},
		"an item of another kind":   {`{"items":[{"kind":"Secret","metadata":{"name":"a"}}],"kind":"ConfigMapList"}`, `list item 0 is of kind "Secret"`},
		"an item that is no object": {`{"kind":"ConfigMapList","items":[{},7]}`, "list item 1 is not a JSON object"},
		"an item that is not JSON":  {`{"kind":"ConfigMapList","items":[{"metadata":{"name":x}}]}`, "list item 0"},
		"two items fields":          {`{"kind":"ConfigMapList","items":[],"items":[]}`, `two "items"`},
		"data after the list":       {ok + `{}`, "after the end"},
		"another apiVersion":        {`{"kind":"ConfigMapList","apiVersion":"example.com/v9","items":[{}]}`, `apiVersion "example.com/v9", want "v1"`},
		"no items":                  {`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{}}`, "has no items"},
		"a value that is not JSON":  {`{"kind":"ConfigMapList","apiVersion":"v1","extra":{"y"},"items":[]}`, "not JSON"},
		"not JSON":                  {"k8s\x00 protobuf", "not a JSON list"},
		"empty":                     {"", "not a JSON list"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var got []*corev1.ConfigMap
			_, err := decodeJSONList(strings.NewReader(c.body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
			assert.ErrorIs(t, err, ErrUnexpectedObject)
			assert.ErrorContains(t, err, c.want)
		})
	}
	var got []*corev1.ConfigMap
	meta, err := decodeJSONList(strings.NewReader(ok), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
	require.NoError(t, err, "the good one the cases are made from")
	assert.Equal(t, "1", meta.ResourceVersion)
}

// As for protobuf: the batch opened for an item cut short holds nothing
// and is dropped.
func TestAJSONListCutAfterAFullBatchHandsOverNoEmptyPart(t *testing.T) {
	body := bytes.TrimRight(encodeJSONList(t, configMapList(batchItems+1)), "\n")
	var sizes []int
	_, err := decodeJSONList(bytes.NewReader(body[:len(body)-10]), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), func(part []*corev1.ConfigMap) error {
		sizes = append(sizes, len(part))
		return nil
	})
	require.Error(t, err)
	assert.Equal(t, []int{batchItems}, sizes)
}

func TestAJSONListCutAnywhereIsAnError(t *testing.T) {
	body := encodeJSONList(t, awkwardConfigMapList(3))
	body = bytes.TrimRight(body, "\n")
	for n := range len(body) {
		var got []*corev1.ConfigMap
		_, err := decodeJSONList(bytes.NewReader(body[:n]), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
		require.Error(t, err, "cut after %d of %d bytes: %q", n, len(body), body[:n])
	}
	var got []*corev1.ConfigMap
	_, err := decodeJSONList(bytes.NewReader(body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
	require.NoError(t, err)
	assert.Len(t, got, 3)
}

func TestARefusedJSONPartStopsTheListWithTheRefusal(t *testing.T) {
	refused := errors.New("the store is closed")
	parts := 0
	_, err := decodeJSONList(bytes.NewReader(encodeJSONList(t, configMapList(20_000))), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), func([]*corev1.ConfigMap) error {
		parts++
		return refused
	})
	assert.Same(t, refused, err, "returned as it is")
	assert.Equal(t, 1, parts, "nothing handed over after the refusal")
}

func TestAJSONListWithNullOrEmptyItemsIsEmpty(t *testing.T) {
	for _, body := range []string{
		`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":null}`,
		` { "metadata" : { "resourceVersion" : "5" } , "kind" : "ConfigMapList" , "items" : [ ] , "apiVersion" : "v1" } ` + "\n",
	} {
		var got []*corev1.ConfigMap
		meta, err := decodeJSONList(strings.NewReader(body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
		require.NoError(t, err, body)
		assert.Empty(t, got)
		assert.Equal(t, "5", meta.ResourceVersion)
	}
}

func FuzzDecodeJSONList(f *testing.F) {
	f.Add(encodeJSONList(f, awkwardConfigMapList(2)))
	f.Add(encodeJSONList(f, widgetList(2)))
	f.Fuzz(func(t *testing.T, body []byte) {
		var got []*unstructured.Unstructured
		_, err := decodeJSONList(bytes.NewReader(body), anyList, unstructuredJSONItem, collect(&got))
		if err == nil {
			return
		}
		assert.ErrorIs(t, err, ErrUnexpectedObject, "every failure says the answer was bad")
	})
}

// widgetList is a custom resource's list, as the API server holds it.
func widgetList(n int) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{"resourceVersion": "9"},
	}}
	for i := range n {
		list.Items = append(list.Items, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": fmt.Sprintf("w-%d", i), "namespace": "shop"},
			"spec":     map[string]any{"size": int64(i), "colour": `"blue" ]}`},
		}})
	}
	return list
}

// The lists the tests ask for: anyList is what the unstructured mode asks.
var (
	cmListType     = metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}
	widgetListType = metav1.TypeMeta{Kind: "WidgetList", APIVersion: "example.com/v1"}
	anyList        = metav1.TypeMeta{}
)

func collect[T any](into *[]T) func([]T) error {
	return func(part []T) error {
		*into = append(*into, part...)
		return nil
	}
}

func scheme(t testing.TB) *runtime.Scheme {
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	return s
}

func TestAnUnstructuredItemIsNotGivenHalfOfTheListsType(t *testing.T) {
	body := `{"kind":"ConfigMapList","items":[{"metadata":{"name":"a","namespace":"d"}}],"apiVersion":"v1","metadata":{}}`
	var got []*unstructured.Unstructured
	_, err := decodeJSONList(strings.NewReader(body), anyList, unstructuredJSONItem, collect(&got))
	assert.ErrorContains(t, err, "names no kind and apiVersion", "the apiVersion comes after the item: an error, not an empty apiVersion")
	assert.Empty(t, got)
}

func TestAJSONListsMetadataIsReadCaseSensitivelyAsTheAPIMachineryReadsIt(t *testing.T) {
	body := `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5","ResourceVersion":"9","Continue":"bogus"},"items":[]}`
	var got []*corev1.ConfigMap
	meta, err := decodeJSONList(strings.NewReader(body), cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
	require.NoError(t, err)
	assert.Equal(t, metav1.ListMeta{ResourceVersion: "5"}, meta)
}

func TestAnAnswerWhoseReadingFailsIsAReadingFailureNotABadObject(t *testing.T) {
	body := encodeJSONList(t, configMapList(100))
	cut := readErrors{io.MultiReader(bytes.NewReader(body[:len(body)/2]), iotest.ErrReader(context.DeadlineExceeded))}
	var got []*corev1.ConfigMap
	_, err := decodeJSONList(cut, cmListType, typedJSONItem[*corev1.ConfigMap]("ConfigMap"), collect(&got))
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the cause is kept")
	assert.NotErrorIs(t, err, ErrUnexpectedObject)
	assert.ErrorContains(t, err, "reading the LIST answer")

	_, _, err = decodeAll(readErrors{io.MultiReader(bytes.NewReader(encodeList(t, configMapList(100))[:500]), iotest.ErrReader(context.DeadlineExceeded))}, "ConfigMapList")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "protobuf too")
	assert.NotErrorIs(t, err, errNotAProtobufList)
}
