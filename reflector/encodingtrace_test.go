package reflector_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// A Source.CBOR ListerWatcher's name says what it asks for ("offers
// CBOR"), which a server without the CBORServingAndStorage gate answers
// in JSON; the name stays one value either way (it labels metrics). What
// the server answered is in each LIST's trace event: "in CBOR" or "in
// JSON".
func TestTheListTraceEventSaysWhichEncodingTheServerAnswered(t *testing.T) {
	for _, answer := range []string{runtime.ContentTypeCBOR, runtime.ContentTypeJSON} {
		t.Run(answer, func(t *testing.T) {
			list := &unstructured.UnstructuredList{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{"resourceVersion": "9"},
			}}
			list.Items = []unstructured.Unstructured{{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "shop"},
			}}}
			var body bytes.Buffer
			if answer == runtime.ContentTypeCBOR {
				require.NoError(t, cbor.NewSerializer(nil, nil).Encode(list, &body))
			} else {
				require.NoError(t, unstructured.UnstructuredJSONScheme.Encode(list, &body))
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("watch") == "true" {
					w.Header().Set("Content-Type", runtime.ContentTypeJSON)
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					<-r.Context().Done() // a watch with no events
					return
				}
				w.Header().Set("Content-Type", answer)
				_, _ = w.Write(body.Bytes())
			}))
			t.Cleanup(srv.Close)
			lw, err := reflector.NewUnstructuredListerWatcher(&rest.Config{Host: srv.URL}, reflector.Source{
				Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, CBOR: true,
			})
			require.NoError(t, err)
			assert.Equal(t, "widgets.example.com, offers CBOR (unstructured)", lw.String())
			trace := &traceLog{}
			r, err := reflector.New(reflector.Options[*unstructured.Unstructured]{
				ListerWatcher: lw, Store: newRecorder[*unstructured.Unstructured](), Trace: trace.hook,
			})
			require.NoError(t, err)
			run(t, r)
			eventually(t, func() bool { return len(trace.of(reflector.KindList)) > 0 }, "no list")
			want := map[string]string{runtime.ContentTypeCBOR: "in CBOR", runtime.ContentTypeJSON: "in JSON"}[answer]
			assert.Equal(t, `page 1: 1 object `+want+` (asked resourceVersion="", limit=500)`, trace.of(reflector.KindList)[0].Detail)
		})
	}
}
