package reflector_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// 089a0c3: "an unstructured list that names no apiVersion is taken as in
// the version asked" (a server not built on apimachinery may leave it
// out). The CBOR reader does so: its items, which name no type of their
// own, are read as of the version asked. The JSON reader, the default
// encoding of the same lister-watcher, must read the same list the same
// way (cborlist.go: "the same checks apply"); instead every item fails
// with "names no kind and apiVersion", so every LIST fails and the
// informer never syncs.
func TestAJSONUnstructuredListThatNamesNoAPIVersionIsTakenAsInTheVersionAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[` +
			`{"metadata":{"name":"a","namespace":"default","resourceVersion":"3","uid":"u-a"},"data":{"k":"v"}}]}`))
	}))
	defer srv.Close()
	lw, err := reflector.NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL},
		reflector.Source{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	require.NoError(t, err)
	items, meta, err := lw.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err, "a list that names no apiVersion, whose items are read as of the version asked (v1) in CBOR, fails in JSON")
	require.Equal(t, "5", meta.ResourceVersion)
	require.Len(t, items, 1)
	require.Equal(t, "v1", items[0].GetAPIVersion())
	require.Equal(t, "ConfigMap", items[0].GetKind())
}
