package reflector_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// On the real kube-apiserver with CBORServingAndStorage on: (1) an
// unstructured CBOR ListerWatcher of a built-in resource (what the
// factory makes for InformerFor[*unstructured.Unstructured] with
// ForResource(configmaps)) lists it; (2) a custom resource written with
// a whole number as a float ("replicas": 2.0) reads the same in CBOR as
// in JSON, so a relist that changes encoding reports no false update.
func TestWithTheCBORGateOnBuiltInsListAndCBORObjectsEqualJSONOnes(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{FeatureGates: map[string]bool{"CBORServingAndStorage": true}})
	require.NoError(t, cp.InstallCRD(t.Context(), cborWidgets))
	ns := cp.Namespace(t)
	ws := &widgets{t: t, cfg: cp.Config(), ns: ns}
	ws.do(http.MethodPost, ws.path(""), []byte(`{"apiVersion":"cbor.listwatch.dev/v1","kind":"Widget","metadata":{"name":"f"},"spec":{"replicas":2.0,"ratio":0.5}}`), http.StatusCreated)

	t.Run("built-in", func(t *testing.T) {
		ws.do(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`), http.StatusCreated)
		lw, err := reflector.NewUnstructuredListerWatcher(cp.Config(), reflector.Source{
			Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: ns, CBOR: true,
		})
		require.NoError(t, err)
		items, _, err := lw.List(t.Context(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, items, 1)
		assert.Equal(t, []string{"v1", "ConfigMap", "c"}, []string{items[0].GetAPIVersion(), items[0].GetKind(), items[0].GetName()})
	})
	t.Run("floats", func(t *testing.T) {
		gvr := schema.GroupVersionResource{Group: cborWidgets.Group, Version: cborWidgets.Version, Resource: cborWidgets.Plural}
		var specs []any
		for _, cbor := range []bool{false, true} {
			lw, err := reflector.NewUnstructuredListerWatcher(cp.Config(), reflector.Source{Resource: gvr, Namespace: ns, CBOR: cbor})
			require.NoError(t, err)
			items, _, err := lw.List(t.Context(), metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, items, 1)
			specs = append(specs, items[0].Object["spec"])
		}
		assert.Equal(t, specs[0], specs[1], "JSON, then CBOR")
	})
}
