package reflector_test

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

var cborWidgets = testenv.CRD{Group: "cbor.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}

// With CBORServingAndStorage on, a Source.CBOR reflector reads a custom
// resource in CBOR (LIST and WATCH), and its cache equals the server's
// objects, field for field, after the first list, after watch events,
// and after a relist forced by a real 410 (the ERROR event comes in CBOR
// too).
func TestACBORCacheEqualsTheServerThroughEventsAndARelistWithTheGateOn(t *testing.T) {
	types, lists := widgetsThroughARelist(t, true)
	assert.Equal(t, []string{"application/cbor", "application/cbor-seq"}, types, "every answer came in CBOR")
	for _, e := range lists {
		assert.Contains(t, e.Detail, " in CBOR", "the LIST trace event says what came")
	}
}

// With the gate off (1.37's default) the same reflector asks the same
// way, is answered in JSON, and nothing fails.
func TestACBORSourceReadsJSONWithoutFailingWithTheGateOff(t *testing.T) {
	types, lists := widgetsThroughARelist(t, false)
	assert.Equal(t, []string{"application/json"}, types, "every answer came in JSON")
	for _, e := range lists {
		assert.Contains(t, e.Detail, " in JSON", "the LIST trace event says what came, though CBOR was offered")
	}
}

// widgetsThroughARelist runs the scenario on a control plane of its own
// (the watch cache off, so that a compaction makes a re-watch answer
// 410) with the CBOR gate on or off, and returns the media types the
// server answered the reflector with and its LIST trace events.
func widgetsThroughARelist(t *testing.T, gate bool) ([]string, []informer.TraceEvent) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true, FeatureGates: map[string]bool{"CBORServingAndStorage": gate}})
	require.NoError(t, cp.InstallCRD(t.Context(), cborWidgets))
	ns := cp.Namespace(t)
	ws := &widgets{t: t, cfg: cp.Config(), ns: ns}
	a := ws.create("a", 1)
	ws.create("b", 2)
	proxy, viaProxy := cp.Proxy(t)
	seen := &mediaTypes{}
	viaProxy.Wrap(seen.wrap)

	lw, err := reflector.NewUnstructuredListerWatcher(viaProxy, reflector.Source{
		Resource:  schema.GroupVersionResource{Group: cborWidgets.Group, Version: cborWidgets.Version, Resource: cborWidgets.Plural},
		Namespace: ns, CBOR: true,
	})
	require.NoError(t, err)
	store := newRecorder[*unstructured.Unstructured]()
	errs, trace := &errorLog{}, &traceLog{}
	run(t, must(reflector.New(reflector.Options[*unstructured.Unstructured]{
		ListerWatcher: lw, Store: store, OnError: errs.hook, Trace: trace.hook,
		Tuning: reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
	})))
	cacheEqualsServer(t, store, ws) // the first list
	watching(t, trace, 1)

	ws.update(a, 10)
	ws.delete("b")
	ws.create("c", 3)
	cacheEqualsServer(t, store, ws) // watch events

	// Cut the watch, change and compact while it is away: the re-watch
	// gets a real 410 and the reflector relists.
	proxy.Blackhole()
	proxy.CutAll()
	ws.delete("a")
	ws.create("d", 4)
	_, err = cp.Compact(t.Context())
	require.NoError(t, err)
	proxy.Heal()
	cacheEqualsServer(t, store, ws)
	assert.GreaterOrEqual(t, errs.count(apierrors.IsResourceExpired), 1, "the watch got a real 410")
	assert.Len(t, trace.of(reflector.KindRelist), 1, "one relist")
	lists := trace.of(reflector.KindList)
	assert.Len(t, lists, 2, "the first list and the relist")
	return seen.all(), lists
}

// cacheEqualsServer waits until the recorder holds exactly the server's
// widgets, each equal to the server's in every field, read as JSON.
func cacheEqualsServer(t *testing.T, store *recorder[*unstructured.Unstructured], ws *widgets) {
	t.Helper()
	var want, have map[string]*unstructured.Unstructured
	require.Eventually(t, func() bool {
		want, have = ws.state(), map[string]*unstructured.Unstructured{}
		store.mu.Lock()
		for k, obj := range store.mirror {
			have[k.String()] = obj
		}
		store.mu.Unlock()
		return assert.ObjectsAreEqual(want, have)
	}, 30*time.Second, 50*time.Millisecond, "the cache never equalled the server")
}

// widgets writes and reads Widgets in one namespace, in JSON.
type widgets struct {
	t   *testing.T
	cfg *rest.Config
	ns  string
}

func (w *widgets) path(name string) string {
	p := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", cborWidgets.Group, cborWidgets.Version, w.ns, cborWidgets.Plural)
	if name != "" {
		p += "/" + name
	}
	return p
}

// spec holds a value of every JSON type, so that a difference between
// how CBOR and JSON decode shows.
func spec(size int) map[string]any {
	return map[string]any{"size": int64(size), "ratio": 0.5, "ready": true, "owner": nil, "tags": []any{"x", int64(size)}}
}

func (w *widgets) create(name string, size int) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": cborWidgets.Group + "/" + cborWidgets.Version, "kind": cborWidgets.Kind, "spec": spec(size)}}
	obj.SetName(name)
	return w.send(http.MethodPost, w.path(""), obj, http.StatusCreated)
}

func (w *widgets) update(obj *unstructured.Unstructured, size int) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	obj.Object["spec"] = spec(size)
	return w.send(http.MethodPut, w.path(obj.GetName()), obj, http.StatusOK)
}

func (w *widgets) delete(name string) {
	w.send(http.MethodDelete, w.path(name), nil, http.StatusOK)
}

// state is the server's widgets, by key.
func (w *widgets) state() map[string]*unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	require.NoError(w.t, list.UnmarshalJSON(w.do(http.MethodGet, w.path(""), nil, http.StatusOK)))
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[w.ns+"/"+list.Items[i].GetName()] = &list.Items[i]
	}
	return out
}

func (w *widgets) send(method, path string, obj *unstructured.Unstructured, status int) *unstructured.Unstructured {
	var body []byte
	if obj != nil {
		var err error
		body, err = obj.MarshalJSON()
		require.NoError(w.t, err)
	}
	out := &unstructured.Unstructured{}
	require.NoError(w.t, out.UnmarshalJSON(w.do(method, path, body, status)))
	return out
}

func (w *widgets) do(method, path string, body []byte, status int) []byte {
	w.t.Helper()
	client, err := rest.HTTPClientFor(w.cfg)
	require.NoError(w.t, err)
	req, err := http.NewRequestWithContext(w.t.Context(), method, w.cfg.Host+path, bytes.NewReader(body))
	require.NoError(w.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	require.Equal(w.t, status, resp.StatusCode, "%s %s: %s", method, path, out)
	return out
}

// mediaTypes records the media types of the successful answers a client
// receives.
type mediaTypes struct {
	mu    sync.Mutex
	types []string // guarded by mu; each once, in order of first sight
}

func (m *mediaTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			m.mu.Lock()
			if !slices.Contains(m.types, typ) {
				m.types = append(m.types, typ)
			}
			m.mu.Unlock()
		}
		return resp, err
	})
}

func (m *mediaTypes) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.types)
}

// A streaming list (Tuning.StreamingList) of a custom resource arrives in
// CBOR as its watch events do, ending in the bookmark that closes the
// initial events, and the cache equals the server.
func TestAStreamingListOfACustomResourceComesInCBORWithTheGateOn(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{FeatureGates: map[string]bool{"CBORServingAndStorage": true}})
	require.NoError(t, cp.InstallCRD(t.Context(), cborWidgets))
	ns := cp.Namespace(t)
	ws := &widgets{t: t, cfg: cp.Config(), ns: ns}
	ws.create("a", 1)
	ws.create("b", 2)
	cfg := rest.CopyConfig(cp.Config())
	seen := &mediaTypes{}
	cfg.Wrap(seen.wrap)
	lw, err := reflector.NewUnstructuredListerWatcher(cfg, reflector.Source{
		Resource:  schema.GroupVersionResource{Group: cborWidgets.Group, Version: cborWidgets.Version, Resource: cborWidgets.Plural},
		Namespace: ns, CBOR: true,
	})
	require.NoError(t, err)
	store := newRecorder[*unstructured.Unstructured]()
	trace := &traceLog{}
	run(t, must(reflector.New(reflector.Options[*unstructured.Unstructured]{
		ListerWatcher: lw, Store: store, OnError: func(err error) { t.Error(err) }, Trace: trace.hook,
		Tuning: reflector.Tuning{StreamingList: true},
	})))
	cacheEqualsServer(t, store, ws)
	ws.create("c", 3)
	cacheEqualsServer(t, store, ws)
	assert.Empty(t, trace.of(reflector.KindList), "no LIST: the list came over the watch")
	assert.Equal(t, []string{"application/cbor-seq"}, seen.all())
}
