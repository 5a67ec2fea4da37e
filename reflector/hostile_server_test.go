package reflector_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/internal/hostile"
	"github.com/listwatch/informer/reflector"
)

// The hostile server and its helpers live in internal/hostile, shared
// with the chaos package's tests; these names keep the tests short.
type hostileServer = hostile.Server

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

func newHostileServer(t *testing.T) *hostileServer { return hostile.NewServer(t, goodList, nil) }

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
// the request rate.
func hostileReflector(t *testing.T, s *hostileServer, tweak func(*reflector.Options[*corev1.ConfigMap])) (*recorder[*corev1.ConfigMap], *errorLog, *reflector.Reflector[*corev1.ConfigMap]) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: s.URL, QPS: -1}, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns",
	})
	require.NoError(t, err)
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	opts := reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook,
		Tuning: reflector.Tuning{BackoffInitial: hostileInitial, BackoffMax: hostileMax}}
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
