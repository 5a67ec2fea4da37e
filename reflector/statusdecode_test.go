package reflector

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/client-go/rest"
)

// An unstructured ListerWatcher's error answer is read as the Status it
// carries, in JSON and in CBOR: its reason and details (a 429's
// retryAfterSeconds, say) reach the reflector, not only the HTTP code.
func TestAnUnstructuredErrorAnswerIsReadAsItsStatusInJSONAndCBOR(t *testing.T) {
	for _, mediaType := range []string{runtime.ContentTypeJSON, runtime.ContentTypeCBOR} {
		t.Run(mediaType, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				slow := apierrors.NewTooManyRequests("slow down", 7).ErrStatus
				slow.APIVersion, slow.Kind = "v1", "Status"
				var enc runtime.Encoder = json.NewSerializerWithOptions(json.DefaultMetaFactory, envelopeScheme, envelopeScheme, json.SerializerOptions{})
				if mediaType == runtime.ContentTypeCBOR {
					enc = cbor.NewSerializer(envelopeScheme, envelopeScheme)
				}
				var body bytes.Buffer
				require.NoError(t, enc.Encode(&slow, &body))
				w.Header().Set("Content-Type", mediaType)
				w.WriteHeader(http.StatusTooManyRequests) // no Retry-After header: the wait is in the Status only
				_, _ = w.Write(body.Bytes())
			}))
			t.Cleanup(srv.Close)
			lw, err := NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, Source{
				Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"},
				CBOR:     mediaType == runtime.ContentTypeCBOR,
			})
			require.NoError(t, err)
			_, _, err = lw.List(t.Context(), metav1.ListOptions{})
			assert.Equal(t, 7*1e9, float64(retryAfter(err)), "the LIST's Status is read: %v", err)
			_, err = lw.Watch(t.Context(), metav1.ListOptions{})
			assert.Equal(t, 7*1e9, float64(retryAfter(err)), "the WATCH's Status is read: %v", err)
		})
	}
}
