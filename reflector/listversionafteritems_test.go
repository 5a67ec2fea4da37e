package reflector_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// A JSON list that names its kind before its items and its apiVersion
// only after them (kube-apiserver names both first) has its items read as
// of the version asked, but none is handed over until the list has named
// its version: a list in another version fails with nothing handed over,
// not with its items queued for handlers as objects of the version asked.
func TestAJSONListNamingAnotherAPIVersionAfterItsItemsHandsNoItemOverAsInTheVersionAsked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[` +
			`{"metadata":{"name":"a","namespace":"default","resourceVersion":"3","uid":"u-a"},"data":{"k":"v"}}],"apiVersion":"v2"}`))
	}))
	defer srv.Close()
	lw, err := reflector.NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL},
		reflector.Source{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}})
	require.NoError(t, err)
	var handed []*unstructured.Unstructured
	_, err = lw.ListInParts(t.Context(), metav1.ListOptions{}, func(objs []*unstructured.Unstructured) error {
		handed = append(handed, objs...)
		return nil
	})
	require.Error(t, err, "the list answered v2, not the v1 asked")
	for _, u := range handed {
		require.NotEqual(t, "v1", u.GetAPIVersion(),
			"item %s of a list the server answered in v2 was handed over as v1 before the list's apiVersion was checked", u.GetName())
	}
}
