package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// server speaks just enough of the Kubernetes API for the ConfigMaps of
// namespace "ns" and answers as badly as a test tells it to. It logs the
// time of every request. (Package reflector's tests have a server like it;
// test helpers are not shared across packages.)
type server struct {
	*httptest.Server
	closing chan struct{} // closed at cleanup, so held-open watches end

	mu      sync.Mutex
	list    http.HandlerFunc // guarded by mu
	watch   http.HandlerFunc // guarded by mu
	lists   []time.Time      // guarded by mu
	watches []time.Time      // guarded by mu
}

func newServer(t *testing.T, list, watch http.HandlerFunc) *server {
	s := &server{closing: make(chan struct{}), list: list, watch: watch}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { close(s.closing); s.Close() })
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/namespaces/ns/configmaps" {
		writeJSON(w, http.StatusNotFound, statusObject(http.StatusNotFound, metav1.StatusReasonNotFound, "no such path"))
		return
	}
	s.mu.Lock()
	handler := s.list
	if r.URL.Query().Get("watch") == "true" {
		handler = s.watch
		s.watches = append(s.watches, time.Now())
	} else {
		s.lists = append(s.lists, time.Now())
	}
	s.mu.Unlock()
	handler(w, r)
}

// answer replaces the handlers; nil keeps one as it is.
func (s *server) answer(list, watch http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list != nil {
		s.list = list
	}
	if watch != nil {
		s.watch = watch
	}
}

// requests returns the times of the LISTs or the WATCHes served so far.
func (s *server) requests(watch bool) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if watch {
		return append([]time.Time(nil), s.watches...)
	}
	return append([]time.Time(nil), s.lists...)
}

// holdOpen answers a WATCH with events (JSON lines), then keeps the
// stream open until the client leaves.
func (s *server) holdOpen(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			fmt.Fprintln(w, e)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	}
}

// pagedList answers a LIST with objs at resourceVersion rv, in pages of
// the limit asked, the continue token being the index of the next item.
// If brokenPage > 0, that page is cut off half-way by a connection reset.
func pagedList(rv string, brokenPage int, objs ...map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		if limit <= 0 {
			limit = len(objs)
		}
		to := min(from+limit, len(objs))
		meta := map[string]any{"resourceVersion": rv}
		if to < len(objs) {
			meta["continue"] = strconv.Itoa(to)
		}
		body, _ := json.Marshal(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": objs[from:to]})
		page := 1 + from/max(limit, 1)
		w.Header().Set("Content-Type", "application/json")
		if page == brokenPage {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the server resets the connection
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

// raw answers with code and body as given.
func raw(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

func statusObject(code int, reason metav1.StatusReason, msg string) map[string]any {
	return map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": msg}
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// cm is a ConfigMap of namespace "ns" as JSON.
func cm(name, rv string) map[string]any {
	return map[string]any{"kind": "ConfigMap", "apiVersion": "v1",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}}
}

// event is one line of a JSON watch stream.
func event(typ string, obj map[string]any) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	return string(b)
}

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

// maxAttempts is the most requests a step that keeps failing can make
// within w, with a backoff from initial doubling to max: the first at
// once, each later one after at least the next base wait. Jitter only
// lengthens waits, so it cannot raise the count.
func maxAttempts(w, initial, max time.Duration) int {
	n, elapsed, wait := 1, time.Duration(0), initial
	for {
		elapsed += wait
		if elapsed > w {
			return n
		}
		n++
		wait = min(2*wait, max)
	}
}

// within counts the times in [from, from+w].
func within(times []time.Time, from time.Time, w time.Duration) int {
	n := 0
	for _, at := range times {
		if !at.Before(from) && !at.After(from.Add(w)) {
			n++
		}
	}
	return n
}

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
		Reflector: reflector.Options[*corev1.ConfigMap]{
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

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(t *testing.T, cond func() bool, timeout time.Duration, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(msg, args...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
