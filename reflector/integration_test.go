package reflector_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// Against the real control plane: the reflector's mirror converges to the
// server's state through creates, updates and deletes, in every decoding
// mode.
func TestConvergesThroughCreatesUpdatesAndDeletes(t *testing.T) {
	cp := testenv.Shared(t)
	for _, mode := range []string{"json", "protobuf", "unstructured", "metadata", "metadata-protobuf"} {
		t.Run(mode, func(t *testing.T) {
			ns := cp.Namespace(t)
			cms := newConfigMaps(t, cp.Config(), ns)
			a := cms.create("a")
			cms.create("b")
			mirror := startMirror(t, cp, ns, mode)
			converged(t, mirror, cms)

			cms.update(a, "2")
			cms.delete("b")
			cms.create("c")
			converged(t, mirror, cms)
		})
	}
}

// startMirror runs a reflector in one decoding mode and returns its
// mirror's state.
func startMirror(t *testing.T, cp *testenv.ControlPlane, ns, mode string) func() map[string]string {
	src := reflector.Source{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns}
	switch mode {
	case "unstructured":
		lw, err := reflector.NewUnstructuredListerWatcher(cp.Config(), src)
		require.NoError(t, err)
		store := newRecorder[*unstructured.Unstructured]()
		run(t, must(reflector.New(reflector.Options[*unstructured.Unstructured]{ListerWatcher: lw, Store: store, OnError: func(err error) { t.Error(err) }})))
		return store.state
	case "metadata", "metadata-protobuf":
		src.Protobuf = mode == "metadata-protobuf"
		lw, err := reflector.NewMetadataListerWatcher(cp.Config(), src)
		require.NoError(t, err)
		store := newRecorder[*metav1.PartialObjectMetadata]()
		run(t, must(reflector.New(reflector.Options[*metav1.PartialObjectMetadata]{ListerWatcher: lw, Store: store, OnError: func(err error) { t.Error(err) }})))
		return store.state
	default:
		store := newRecorder[*corev1.ConfigMap]()
		lw := typedConfigMapLW(t, cp.Config(), ns, mode == "protobuf")
		run(t, must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: func(err error) { t.Error(err) }})))
		return store.state
	}
}

func TestMetadataModeKeepsOnlyMetadata(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	lw, err := reflector.NewMetadataListerWatcher(cp.Config(), reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns, LabelSelector: "app=test",
	})
	require.NoError(t, err)
	store := newRecorder[*metav1.PartialObjectMetadata]()
	r := must(reflector.New(reflector.Options[*metav1.PartialObjectMetadata]{ListerWatcher: lw, Store: store}))
	run(t, r)
	converged(t, store.state, cms)

	store.mu.Lock()
	obj := store.mirror[informer.Key{Namespace: ns, Name: "a"}]
	store.mu.Unlock()
	assert.Equal(t, "PartialObjectMetadata", obj.Kind, "the server sent metadata only")
	assert.Equal(t, map[string]string{"app": "test"}, obj.Labels)
}

func TestSelectorsFilterOnTheServer(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	cms.create("b")
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cp.Config(), newScheme(t), reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
		LabelSelector: "app=test", FieldSelector: "metadata.name=b",
	})
	require.NoError(t, err)
	store := newRecorder[*corev1.ConfigMap]()
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store}))
	run(t, r)
	eventually(t, func() bool { return len(store.state()) == 1 }, "no list")
	assert.Contains(t, store.state(), ns+"/b")
}

func TestPaginatesAListLargerThanAPage(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	for i := range 25 {
		cms.create(fmt.Sprintf("cm-%02d", i))
	}
	ua := agent(t)
	started := time.Now()
	l := cmReflector(t, withAgent(cp.Config(), ua), ns, func(o *reflector.Options[*corev1.ConfigMap]) { o.PageSize = 10 })
	eventually(t, func() bool { return l.store.count("replace") == 1 }, "no list")
	t.Logf("listed 25 objects in pages of 10 in %v", time.Since(started).Round(time.Millisecond))

	assert.Equal(t, 3, countRequests(t, cp, ua, "list"), "25 objects in pages of 10: 3 LIST requests")
	assert.Len(t, l.store.replaces()[0], 25, "one Replace with all of them")
	assert.Len(t, l.trace.of(reflector.KindList), 3)
}

// Pitfall 6: a resync replays the store; it is not a relist. Counted at
// the server, resyncs add no request at all.
func TestResyncMakesNoAPICalls(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	ua := agent(t)
	l := cmReflector(t, withAgent(cp.Config(), ua), ns, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.ResyncPeriod = 100 * time.Millisecond
	})
	eventually(t, func() bool { return l.store.count("resync") >= 10 }, "fewer than 10 resyncs")
	l.stop()
	assert.Equal(t, 1, countRequests(t, cp, ua, "list"))
	assert.Equal(t, 1, countRequests(t, cp, ua, "watch"))
	assert.Len(t, l.trace.of(reflector.KindResync), l.store.count("resync"))
}

func TestNoGoroutineOutlivesRunAgainstTheRealServer(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	// Idle keep-alive connections belong to the shared HTTP transport,
	// which client-go caches per configuration, not to the reflector.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	)
	l := cmReflector(t, cp.Config(), ns, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.ResyncPeriod = 50 * time.Millisecond
	})
	watching(t, l.trace, 1)
	cms.create("b")
	converged(t, l.store.state, cms)
	l.stop() // before goleak looks, not at cleanup
}

func TestProtobufModeReadsProtobuf(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cms := newConfigMaps(t, cp.Config(), ns)
	cms.create("a")
	var mu sync.Mutex
	seen := map[string]bool{}
	cfg := cp.Config()
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				mu.Lock()
				seen[resp.Header.Get("Content-Type")] = true
				mu.Unlock()
			}
			return resp, err
		})
	}
	store := newRecorder[*corev1.ConfigMap]()
	run(t, must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: typedConfigMapLW(t, cfg, ns, true), Store: store})))
	converged(t, store.state, cms)
	cms.create("b")
	converged(t, store.state, cms)

	mu.Lock()
	defer mu.Unlock()
	assert.True(t, seen["application/vnd.kubernetes.protobuf"], "the LIST came as protobuf: %v", seen)
	assert.True(t, seen["application/vnd.kubernetes.protobuf;stream=watch"], "the WATCH came as protobuf: %v", seen)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
