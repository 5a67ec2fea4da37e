package reflector_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/internal/hostile"
	"github.com/listwatch/informer/reflector"
)

// The hostile server and its helpers live in internal/hostile, shared
// with the chaos package's tests; these names keep the tests short.
var (
	raw          = hostile.Raw
	status       = hostile.Status
	statusObject = hostile.StatusObject
	writeJSON    = hostile.WriteJSON
	object       = hostile.Object
	event        = hostile.Event
	maxAttempts  = hostile.MaxAttempts
	within       = hostile.Within
)

// hostileServer is a hostile server served in memory, so that a test
// runs it inside a testing/synctest bubble: the times it logs are the
// bubble's simulated ones, and a rate counted over a window is exact.
type hostileServer struct {
	*hostile.Server
	mem *fakeapiserver.InMemory
}

// newHostileServer starts a hostile server answering LIST with goodList
// and holding every WATCH open. Call it inside a bubble; it closes at the
// test's cleanup.
func newHostileServer(t *testing.T) *hostileServer {
	s := &hostileServer{Server: hostile.NewHandler(t, goodList, nil)}
	s.mem = fakeapiserver.ServeInMemory(s.Server)
	t.Cleanup(s.mem.Close)
	return s
}

// goodList answers one ConfigMap "a" at resourceVersion 10.
func goodList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": "ConfigMapList", "apiVersion": "v1",
		"metadata": map[string]any{"resourceVersion": "10"},
		"items":    []any{object("ConfigMap", "a", "9")},
	})
}

// hostileReflector runs a reflector for ConfigMaps in "ns" against s, with
// rest's client-side rate limit off so only the reflector's backoff bounds
// the request rate, and the backoff's jitter off so that, on the bubble's
// clock, each retry comes exactly when the backoff's base wait ends.
func hostileReflector(t *testing.T, s *hostileServer, tweak func(*reflector.Options[*corev1.ConfigMap])) (*recorder[*corev1.ConfigMap], *errorLog, *reflector.Reflector[*corev1.ConfigMap]) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	cfg := s.mem.Config()
	cfg.QPS = -1
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns",
	})
	require.NoError(t, err)
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	opts := reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook,
		Tuning: reflector.Tuning{BackoffInitial: hostileInitial, BackoffMax: hostileMax, BackoffJitter: -1}}
	if tweak != nil {
		tweak(&opts)
	}
	r := must(reflector.New(opts))
	run(t, r)
	return store, errs, r
}

// The hostile tests back off from 50ms, doubling to a cap of 400ms.
const (
	hostileInitial = 50 * time.Millisecond
	hostileMax     = 400 * time.Millisecond
)
