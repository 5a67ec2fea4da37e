package reflector_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// "Every LIST answer is read in parts as it arrives, whatever its
// encoding" (package doc). kube-apiserver with CBORServingAndStorage
// answers an unstructured LIST of a built-in resource in CBOR as
// apimachinery's CBOR serializer writes a typed list: "kind", then
// "items" (which name no kind of their own), then "metadata", and
// "apiVersion" last. Such a list must still reach the store in parts as
// its items arrive, not be held whole until its last bytes.
func TestACBORListOfABuiltInResourceIsHandedOverInPartsBeforeItsAnswerEnds(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	list := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{Kind: "ConfigMapList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "7"}}
	for i := range 2000 { // several batches of 256 items
		list.Items = append(list.Items, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%04d", i), ResourceVersion: "7"},
			Data: map[string]string{"v": "some data"}})
	}
	var buf bytes.Buffer
	require.NoError(t, cbor.NewSerializer(scheme, scheme).Encode(list, &buf))
	body := buf.Bytes()
	// The items end where the list's "metadata" key begins (a byte string
	// of 8 bytes, as apimachinery writes keys); what follows is the list's
	// metadata and apiVersion.
	cut := bytes.LastIndex(body, append([]byte{0x48}, "metadata"...))
	require.Greater(t, cut, len(body)/2, "the items come before the list's metadata and apiVersion")
	require.Greater(t, bytes.LastIndex(body, []byte("apiVersion")), cut, "apiVersion comes after the items")

	gotPart := make(chan struct{})
	tailSent := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeCBOR)
		_, _ = w.Write(body[:cut])
		w.(http.Flusher).Flush()
		select { // the answer's tail waits for a part, up to a bound
		case <-gotPart:
		case <-time.After(10 * time.Second): // a guard: a part comes in microseconds once read
		}
		close(tailSent)
		_, _ = w.Write(body[cut:])
	}))
	t.Cleanup(srv.Close)

	lw, err := reflector.NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, reflector.Source{
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, CBOR: true,
	})
	require.NoError(t, err)
	firstPartBeforeTail, parts, items := false, 0, 0
	meta, err := lw.ListInParts(context.Background(), metav1.ListOptions{}, func(part []*unstructured.Unstructured) error {
		if parts == 0 {
			select {
			case <-tailSent:
			default:
				firstPartBeforeTail = true
			}
			close(gotPart)
		}
		parts++
		items += len(part)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "7", meta.ResourceVersion)
	require.Equal(t, 2000, items)
	require.True(t, firstPartBeforeTail, "no part of the %d items was handed over before the answer's last bytes arrived: the whole list was held (%d parts, all at the end)", items, parts)
}
