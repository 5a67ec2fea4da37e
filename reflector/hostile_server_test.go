package reflector_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/reflector"
)

// hostileServer speaks just enough of the Kubernetes API for one
// collection, the ConfigMaps of namespace "ns", and answers as badly as
// the test tells it to. It logs every request.
type hostileServer struct {
	*httptest.Server
	closing chan struct{} // closed at cleanup, so held-open watches end

	mu    sync.Mutex
	list  http.HandlerFunc // answers LIST; guarded by mu
	watch http.HandlerFunc // answers WATCH; guarded by mu
	log   []served         // guarded by mu
}

type served struct {
	watch bool
	at    time.Time
}

func newHostileServer(t *testing.T) *hostileServer {
	s := &hostileServer{closing: make(chan struct{})}
	s.list, s.watch = goodList, s.holdOpen(nil)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() { close(s.closing); s.Close() })
	return s
}

func (s *hostileServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/namespaces/ns/configmaps" {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "no such path")
		return
	}
	isWatch := r.URL.Query().Get("watch") == "true"
	s.mu.Lock()
	s.log = append(s.log, served{watch: isWatch, at: time.Now()})
	handler := s.list
	if isWatch {
		handler = s.watch
	}
	s.mu.Unlock()
	handler(w, r)
}

// answer replaces the handlers; nil keeps one as it is.
func (s *hostileServer) answer(list, watch http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list != nil {
		s.list = list
	}
	if watch != nil {
		s.watch = watch
	}
}

// requests returns the times of the LISTs (watch=false) or WATCHes served.
func (s *hostileServer) requests(watch bool) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Time
	for _, r := range s.log {
		if r.watch == watch {
			out = append(out, r.at)
		}
	}
	return out
}

// holdOpen answers a WATCH with 200, sends events (JSON lines), then
// keeps the stream open until the client leaves.
func (s *hostileServer) holdOpen(events []string) http.HandlerFunc {
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

// goodList answers one ConfigMap "a" at resourceVersion 10.
func goodList(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"kind": "ConfigMapList", "apiVersion": "v1",
		"metadata": map[string]any{"resourceVersion": "10"},
		"items":    []any{object("ConfigMap", "a", "9")},
	})
}

// raw answers with code and body as given.
func raw(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

func status(code int, reason metav1.StatusReason) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, code, reason, "the hostile server says no")
	}
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	writeJSON(w, code, statusObject(code, reason, msg))
}

func statusObject(code int, reason metav1.StatusReason, msg string) map[string]any {
	return map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": msg}
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func object(kind, name, rv string) map[string]any {
	return map[string]any{"kind": kind, "apiVersion": "v1",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}}
}

// event is one line of a JSON watch stream.
func event(typ string, obj map[string]any) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	return string(b)
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
		BackoffInitial: hostileInitial, BackoffMax: hostileMax}
	if tweak != nil {
		tweak(&opts)
	}
	r := reflector.New(opts)
	run(t, r)
	return store, errs, r
}

// The hostile tests back off from 50ms, doubling to a cap of 400ms.
const (
	hostileInitial = 50 * time.Millisecond
	hostileMax     = 400 * time.Millisecond
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
