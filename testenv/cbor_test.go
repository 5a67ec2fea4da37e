package testenv_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv"
)

// cborFirst offers CBOR first and JSON as the fallback, as a client that
// prefers CBOR but must never fail asks.
const cborFirst = "application/cbor;q=1,application/json;q=0.9"

// selfDescribedCBOR starts everything kube-apiserver encodes in CBOR
// (RFC 8949 tag 55799).
var selfDescribedCBOR = []byte{0xd9, 0xd9, 0xf7}

var gizmos = testenv.CRD{Group: "cbor.listwatch.dev", Version: "v1", Kind: "Gizmo", Plural: "gizmos"}

// TestCBORServingAndStorageGateMakesTheServerAnswerCBOR confirms issue
// 43's premise on the real kube-apiserver 1.37: with the alpha gate on,
// a custom resource's LIST is answered in application/cbor, its WATCH in
// application/cbor-seq, and a built-in's LIST in CBOR as well.
func TestCBORServingAndStorageGateMakesTheServerAnswerCBOR(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Private(t, testenv.Options{FeatureGates: map[string]bool{"CBORServingAndStorage": true}})
	require.NoError(t, cp.InstallCRD(ctx, gizmos))
	ns := cp.Namespace(t)
	createGizmo(ctx, t, cp.Config(), ns, "g1")

	typ, body := get(ctx, t, cp.Config(), "/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos", cborFirst)
	assert.Equal(t, "application/cbor", typ)
	assert.True(t, bytes.HasPrefix(body, selfDescribedCBOR), "a CBOR body starts with tag 55799: % x", body[:min(8, len(body))])

	typ, _ = get(ctx, t, cp.Config(), "/api/v1/namespaces/"+ns+"/configmaps", cborFirst)
	assert.Equal(t, "application/cbor", typ, "built-in resources are served in CBOR too")

	typ, _ = get(ctx, t, cp.Config(), "/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos?watch=true&timeoutSeconds=1", cborFirst)
	assert.Equal(t, "application/cbor-seq", typ, "a watch is a CBOR sequence, one data item per event")
}

// TestWithoutTheCBORGateTheServerAnswersJSONToACBORFirstAccept confirms
// that the gate is off by default in 1.37 and that a client offering CBOR
// first loses nothing: the same request is answered in JSON.
func TestWithoutTheCBORGateTheServerAnswersJSONToACBORFirstAccept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	require.NoError(t, cp.InstallCRD(ctx, gizmos))
	ns := cp.Namespace(t)
	createGizmo(ctx, t, cp.Config(), ns, "g1")

	typ, body := get(ctx, t, cp.Config(), "/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos", cborFirst)
	assert.Equal(t, "application/json", typ)
	assert.Contains(t, string(body), `"name":"g1"`)

	typ, _ = get(ctx, t, cp.Config(), "/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos?watch=true&timeoutSeconds=1", cborFirst)
	assert.Equal(t, "application/json", typ)
}

// createGizmo creates one Gizmo in ns, in JSON.
func createGizmo(ctx context.Context, t *testing.T, cfg *rest.Config, ns, name string) {
	t.Helper()
	obj := `{"apiVersion":"cbor.listwatch.dev/v1","kind":"Gizmo","metadata":{"name":"` + name + `"},"spec":{"size":3}}`
	req := newRequest(ctx, t, cfg, http.MethodPost, "/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos", strings.NewReader(obj))
	req.Header.Set("Content-Type", "application/json")
	resp := do(t, cfg, req)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

// get GETs path with the Accept header accept and returns the response's
// media type and body (a watch ends after its timeoutSeconds).
func get(ctx context.Context, t *testing.T, cfg *rest.Config, path, accept string) (string, []byte) {
	t.Helper()
	req := newRequest(ctx, t, cfg, http.MethodGet, path, nil)
	req.Header.Set("Accept", accept)
	resp := do(t, cfg, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	typ, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return typ, body
}

func newRequest(ctx context.Context, t *testing.T, cfg *rest.Config, method, path string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, body)
	require.NoError(t, err)
	return req
}

func do(t *testing.T, cfg *rest.Config, req *http.Request) *http.Response {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	resp, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
