package reflector_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// typedListHanded serves body as a JSON LIST answer to a typed ConfigMap
// ListerWatcher asking v1, and returns the items handed to parts and the
// list's error.
func typedListHanded(t *testing.T, body string) ([]*corev1.ConfigMap, error) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	s := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(s))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: srv.URL}, s,
		reflector.Source{Resource: corev1.SchemeGroupVersion.WithResource("configmaps")})
	require.NoError(t, err)
	var handed []*corev1.ConfigMap
	_, err = lw.ListInParts(t.Context(), metav1.ListOptions{}, func(objs []*corev1.ConfigMap) error {
		handed = append(handed, objs...)
		return nil
	})
	return handed, err
}

const v2Item = `{"metadata":{"name":"a","namespace":"default","resourceVersion":"3","uid":"u-a"},"data":{"k":"v"}}`

// A list that names its apiVersion, another than asked, before its items
// and its kind after them (keys sorted, as kube-apiserver writes a custom
// resource's list) fails before any item is handed over: its version is
// known wrong before the first item.
func TestAJSONListNamingAnotherAPIVersionBeforeItsItemsAndItsKindAfterHandsNoItemOver(t *testing.T) {
	handed, err := typedListHanded(t, `{"apiVersion":"v2","items":[`+v2Item+`],"kind":"ConfigMapList","metadata":{"resourceVersion":"5"}}`)
	require.Error(t, err, "the list answered v2, not the v1 asked")
	require.Empty(t, handed,
		"the list named apiVersion v2 before its items, yet its items were handed over as v1 ConfigMaps before it failed")
}

// A list naming neither its kind nor its apiVersion before its items is
// held whole until it names them, so one in another version than asked
// fails with nothing handed over.
func TestAJSONListNamingItsTypeOnlyAfterItsItemsHandsNoItemOverBeforeItsVersionIsChecked(t *testing.T) {
	handed, err := typedListHanded(t, `{"items":[`+v2Item+`],"kind":"ConfigMapList","apiVersion":"v2","metadata":{"resourceVersion":"5"}}`)
	require.Error(t, err, "the list answered v2, not the v1 asked")
	require.Empty(t, handed,
		"the list named its apiVersion (v2) only after its items, yet they were handed over as v1 ConfigMaps before its version was checked")
}
