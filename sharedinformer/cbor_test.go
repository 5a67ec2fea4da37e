package sharedinformer_test

import (
	"bytes"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

var cborGizmos = testenv.CRD{Group: "cbor.listwatch.dev", Version: "v1", Kind: "Gizmo", Plural: "gizmos"}

// A factory's informer of a custom resource offers CBOR first: against
// kube-apiserver with CBORServingAndStorage on it lists and watches in
// CBOR, and with WithJSON in JSON, and both caches hold the same objects.
func TestAFactoryReadsCustomResourcesInCBORWhenTheServerOffersIt(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{FeatureGates: map[string]bool{"CBORServingAndStorage": true}})
	require.NoError(t, cp.InstallCRD(t.Context(), cborGizmos))
	ns := cp.Namespace(t)
	gvr := schema.GroupVersionResource{Group: cborGizmos.Group, Version: cborGizmos.Version, Resource: cborGizmos.Plural}
	postGizmo(t, cp.Config(), ns, "a")

	caches := map[string][]*unstructured.Unstructured{}
	for _, mode := range []string{"default", "WithJSON"} {
		seen := &answers{}
		cfg := rest.CopyConfig(cp.Config())
		cfg.Wrap(seen.wrap)
		f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{})
		require.NoError(t, err)
		opts := []sharedinformer.InformerOption{sharedinformer.ForResource(gvr), sharedinformer.InNamespace(ns)}
		if mode == "WithJSON" {
			opts = append(opts, sharedinformer.WithJSON())
		}
		inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, opts...)
		require.NoError(t, err)
		startFactory(t, f)
		require.NoError(t, f.WaitForCacheSync(t.Context()))
		postGizmo(t, cp.Config(), ns, "b-"+strings.ToLower(mode)) // arrives by the watch
		require.Eventually(t, func() bool { return len(inf.Lister().List(nil)) == 2+len(caches) }, hangGuard, 10*time.Millisecond)
		caches[mode] = inf.Lister().List(nil)
		if mode == "default" {
			assert.Equal(t, []string{"application/cbor", "application/cbor-seq"}, seen.types(), "LIST in CBOR, WATCH in a CBOR sequence")
		} else {
			assert.Equal(t, []string{"application/json"}, seen.types())
		}
	}
	byName := func(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
		out := map[string]*unstructured.Unstructured{}
		for _, o := range objs {
			out[o.GetName()] = o
		}
		return out
	}
	cborCache, jsonCache := byName(caches["default"]), byName(caches["WithJSON"])
	assert.Equal(t, jsonCache["a"], cborCache["a"], "the same object, whichever encoding it came in")
	assert.Equal(t, jsonCache["b-default"], cborCache["b-default"])
}

func postGizmo(t *testing.T, cfg *rest.Config, ns, name string) {
	t.Helper()
	client, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	body := `{"apiVersion":"cbor.listwatch.dev/v1","kind":"Gizmo","metadata":{"name":"` + name + `"},"spec":{"size":3,"ratio":0.5,"ready":true,"tags":["x",1]}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, cfg.Host+"/apis/cbor.listwatch.dev/v1/namespaces/"+ns+"/gizmos", bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

// answers records the media types of the successful answers to requests
// for gizmos, each once, in order of first sight.
type answers struct {
	mu   sync.Mutex
	seen []string // guarded by mu
}

func (a *answers) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK && strings.HasSuffix(req.URL.Path, "/gizmos") {
			typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			a.mu.Lock()
			if !slices.Contains(a.seen, typ) {
				a.seen = append(a.seen, typ)
			}
			a.mu.Unlock()
		}
		return resp, err
	})
}

func (a *answers) types() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.seen)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
