package chaos_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/internal/hostile"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// The hostile server and its helpers live in internal/hostile, shared
// with the reflector package's tests; these names keep the tests short.
type server = hostile.Server

var (
	newServer    = hostile.NewServer
	pagedList    = hostile.PagedList
	statusObject = hostile.StatusObject
	writeJSON    = hostile.WriteJSON
	event        = hostile.Event
	maxAttempts  = hostile.MaxAttempts
	within       = hostile.Within
)

// raw answers with code and a JSON body as given.
func raw(code int, body string) http.HandlerFunc { return hostile.Raw(code, "application/json", body) }

// cm is a ConfigMap of namespace "ns" as JSON.
func cm(name, rv string) map[string]any { return hostile.Object("ConfigMap", name, rv) }

// errorLog keeps what OnError received.
type errorLog struct {
	mu   sync.Mutex
	errs []error // guarded by mu
}

func (l *errorLog) hook(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// The hostile tests back off from 50ms, doubling to a cap of 400ms, and
// count requests over this window.
const (
	hostileInitial = 50 * time.Millisecond
	hostileMax     = 400 * time.Millisecond
	hostileWindow  = 1500 * time.Millisecond
)

// hostileInformer runs an informer of the ConfigMaps in "ns" on s, with a
// view as its handler, until the test ends. rest's client-side rate limit
// is off, so only the reflector's backoff bounds the request rate.
func hostileInformer(t *testing.T, s *server, pageSize int64) (*sharedinformer.Informer[*corev1.ConfigMap], *view, *errorLog) {
	t.Helper()
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](&rest.Config{Host: s.URL, QPS: -1}, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "ns",
	})
	require.NoError(t, err)
	errs := &errorLog{}
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Reflector: reflector.Tuning{
			PageSize: pageSize, BackoffInitial: hostileInitial, BackoffMax: hostileMax,
		},
		OnError: errs.hook,
	})
	require.NoError(t, err)
	v := newView("view", 0)
	_, err = inf.AddEventHandler(v.handler(), sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return inf, v, errs
}

// hangGuard bounds every wait for something that must happen: a guard
// against a hang, not a timing. A short bound would assert the machine's
// speed, which a loaded one (two cores, -race, -p 4) breaks.
const hangGuard = time.Minute

// eventually polls cond every 20ms until it holds or hangGuard passes.
func eventually(t *testing.T, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
