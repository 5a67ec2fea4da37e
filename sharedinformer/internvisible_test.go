package sharedinformer_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
)

// widgetFromJSON decodes one Widget as the reflector does, from JSON text.
func widgetFromJSON(t *testing.T, text string) *unstructured.Unstructured {
	t.Helper()
	obj, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(text), nil, nil)
	require.NoError(t, err)
	return obj.(*unstructured.Unstructured)
}

// TestACachedUnstructuredObjectReadsAsTheServerSentIt proves
// internunstructured.go's promise that a managedFields entry is replaced
// only by an equal one (the review that wrote it found a missing field
// taken for an empty one, and -0 for 0):
// for each pair, Widget "a" is cached first and Widget "b", which differs
// from it only in its managedFields entry, second. Whatever the interner
// shares, b must read from the cache as the collection holds it: the
// same JSON, which is what any reader (a handler marshalling it, a
// controller writing it back, a field lookup) sees.
func TestACachedUnstructuredObjectReadsAsTheServerSentIt(t *testing.T) {
	widget := func(name, entry string) string {
		return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"default","name":"` + name +
			`","managedFields":[` + entry + `]},"spec":{"size":1}}`
	}
	const common = `"manager":"widget-controller","operation":"Update","apiVersion":"example.com/v1","time":"2026-12-06T01:02:03Z","fieldsType":"FieldsV1"`
	for _, c := range []struct{ name, a, b string }{
		{"an empty subresource beside none",
			`{` + common + `,"fieldsV1":{"f:spec":{"f:size":{}}}}`,
			`{` + common + `,"subresource":"","fieldsV1":{"f:spec":{"f:size":{}}}}`},
		{"a null fieldsV1 beside none",
			`{` + common + `}`,
			`{` + common + `,"fieldsV1":null}`},
		{"an empty manager beside none",
			`{"operation":"Update","fieldsV1":{}}`,
			`{"manager":"","operation":"Update","fieldsV1":{}}`},
		{"minus zero beside zero in fieldsV1",
			`{` + common + `,"fieldsV1":{"f:spec":{"f:size":0.0}}}`,
			`{` + common + `,"fieldsV1":{"f:spec":{"f:size":-0.0}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			lw := memlistwatch.New[*unstructured.Unstructured]()
			_, err := lw.Create(widgetFromJSON(t, widget("a", c.a)))
			require.NoError(t, err)
			_, err = lw.Create(widgetFromJSON(t, widget("b", c.b)))
			require.NoError(t, err)
			// What the collection holds for b, in a copy of its own.
			listed, _, err := lw.List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, listed, 2)
			want, err := json.Marshal(listed[1].Object)
			require.NoError(t, err)

			inf, err := sharedinformer.New(sharedinformer.Options[*unstructured.Unstructured]{ListerWatcher: lw})
			require.NoError(t, err)
			runInformer(t, inf)
			waitSynced(t, inf)

			b, err := inf.Lister().Namespace("default").Get("b")
			require.NoError(t, err)
			got, err := json.Marshal(b.Object)
			require.NoError(t, err)
			// Compared as text: encoding/json writes map keys sorted, and JSONEq
			// would take -0 for 0.
			require.Equal(t, string(want), string(got), "the cached Widget b reads as another Widget's managedFields entry, not its own")
		})
	}
}
