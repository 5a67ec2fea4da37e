package reflector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/rest"
)

// kube-apiserver 1.37 with CBORServingAndStorage answers a built-in
// resource's LIST in CBOR too (TestCBORServingAndStorageGateMakesTheServerAnswerCBOR).
// A built-in list's items carry no kind or apiVersion, and CBOR's sorted
// keys put the list's "kind" before "items" but "apiVersion" after them.
// An unstructured ListerWatcher with Source.CBOR (the factory's default
// for *unstructured.Unstructured) must read that list, as it reads the
// same list in JSON.
func TestACBORListOfABuiltInResourceIsReadAsUnstructured(t *testing.T) {
	list := &corev1.ConfigMapList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "9"},
		Items:    []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "shop", ResourceVersion: "5"}, Data: map[string]string{"k": "v"}}},
	}
	var body bytes.Buffer
	sch := scheme(t)
	require.NoError(t, cbor.NewSerializer(sch, sch).Encode(list, &body))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeCBOR)
		_, _ = w.Write(body.Bytes())
	}))
	t.Cleanup(srv.Close)
	lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, CBOR: true,
	})
	require.NoError(t, err)
	items, meta, err := lw.List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, "9", meta.ResourceVersion)
	require.Len(t, items, 1)
	assert.Equal(t, "ConfigMap", items[0].GetKind())
	assert.Equal(t, "v1", items[0].GetAPIVersion())
	assert.Equal(t, "a", items[0].GetName())
}

// kube-apiserver 1.37's own CBOR list of a built-in resource (read off
// the real server): "items" first, then "metadata", "apiVersion" and
// "kind", the keys as byte strings, the items without kind.
func TestACBORListOfABuiltInResourceWithItsKindLastIsReadAsUnstructured(t *testing.T) {
	body := []byte("\xd9\xd9\xf7\xa4Eitems\x81\xa1Hmetadata\xa2DnameAcOresourceVersionB67Hmetadata\xa1OresourceVersionB67JapiVersionBv1DkindMConfigMapList")
	var got []*unstructured.Unstructured
	meta, err := decodeCBORList(bytes.NewReader(body), anyList, unstructuredCBORItem, collect(&got))
	require.NoError(t, err)
	assert.Equal(t, "67", meta.ResourceVersion)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"v1", "ConfigMap", "c"}, []string{got[0].GetAPIVersion(), got[0].GetKind(), got[0].GetName()})
}

// A list whose items come before its kind and which names no apiVersion
// at all (a server not built on apimachinery) is read as in the version
// asked, as when its kind comes first; asked for no version, its items
// have none to take, and the error says so rather than that the list
// names its type after its items.
func TestACBORListWithItsKindLastThatNamesNoAPIVersionIsTakenAsInTheVersionAsked(t *testing.T) {
	body := []byte("\xd9\xd9\xf7\xa3Eitems\x81\xa1Hmetadata\xa2DnameAcOresourceVersionB67Hmetadata\xa1OresourceVersionB67DkindMConfigMapList")
	var got []*unstructured.Unstructured
	_, err := decodeCBORList(bytes.NewReader(body), metav1.TypeMeta{APIVersion: "v1"}, unstructuredCBORItem, collect(&got))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"v1", "ConfigMap", "c"}, []string{got[0].GetAPIVersion(), got[0].GetKind(), got[0].GetName()})

	got = nil
	_, err = decodeCBORList(bytes.NewReader(body), anyList, unstructuredCBORItem, collect(&got))
	require.ErrorIs(t, err, ErrUnexpectedObject)
	assert.ErrorContains(t, err, "the list names no apiVersion ahead of its items")
	assert.Empty(t, got)
}
