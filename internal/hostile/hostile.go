// Package hostile is a test-support package: a server that speaks just
// enough of the Kubernetes API for one collection, the ConfigMaps of
// namespace "ns", and answers as badly as a test tells it to, plus the
// arithmetic that bounds how often a client with a backoff may call it.
// The reflector's and the chaos package's hostile-server tests share it.
// NewServer serves it on a real socket (httptest); NewHandler leaves the
// serving to the test, such as in memory inside a testing/synctest
// bubble, where the times it logs are simulated and so exact.
package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Path is the one collection the Server serves.
const Path = "/api/v1/namespaces/ns/configmaps"

// Server answers LIST and WATCH of Path with handlers a test sets, and
// logs the time of every request. Any other path is a 404 Status.
type Server struct {
	*httptest.Server               // nil for a Server from NewHandler
	closing          chan struct{} // closed at cleanup, so held-open watches end

	mu      sync.Mutex
	list    http.HandlerFunc // guarded by mu
	watch   http.HandlerFunc // guarded by mu
	lists   []time.Time      // guarded by mu
	watches []time.Time      // guarded by mu
}

// NewServer starts a Server answering LIST with list and WATCH with watch;
// a nil watch holds every watch open without events. It is closed at the
// test's cleanup.
func NewServer(t testing.TB, list, watch http.HandlerFunc) *Server {
	s := newServer(list, watch)
	s.Server = httptest.NewServer(s)
	t.Cleanup(func() { close(s.closing); s.Close() })
	return s
}

// NewHandler returns a Server that listens nowhere: the test serves it
// (it is an http.Handler), as fakeapiserver.ServeInMemory does inside a
// synctest bubble. Held-open watches end at the test's cleanup.
func NewHandler(t testing.TB, list, watch http.HandlerFunc) *Server {
	s := newServer(list, watch)
	t.Cleanup(func() { close(s.closing) })
	return s
}

func newServer(list, watch http.HandlerFunc) *Server {
	s := &Server{closing: make(chan struct{}), list: list, watch: watch}
	if s.watch == nil {
		s.watch = s.HoldOpen()
	}
	return s
}

// ServeHTTP answers one request, logging its time.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		WriteJSON(w, http.StatusNotFound, StatusObject(http.StatusNotFound, metav1.StatusReasonNotFound, "no such path"))
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

// Answer replaces the handlers; nil keeps one as it is.
func (s *Server) Answer(list, watch http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if list != nil {
		s.list = list
	}
	if watch != nil {
		s.watch = watch
	}
}

// Requests returns the times of the LISTs (watch false) or the WATCHes
// served so far.
func (s *Server) Requests(watch bool) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if watch {
		return append([]time.Time(nil), s.watches...)
	}
	return append([]time.Time(nil), s.lists...)
}

// HoldOpen answers a WATCH with 200, sends events (JSON lines), then keeps
// the stream open until the client leaves or the server closes.
func (s *Server) HoldOpen(events ...string) http.HandlerFunc {
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

// OneEventThenClose answers each WATCH from resourceVersion N with one
// MODIFIED event of ConfigMap "a" at N+1 and ends the stream: a server that
// closes the watch after every event. Each watch moves the client forward,
// so it is progress, not a failure; only a rate limit on re-watching keeps
// a client from opening watches as fast as the server ends them.
func OneEventThenClose(w http.ResponseWriter, r *http.Request) {
	rv, err := strconv.ParseUint(r.URL.Query().Get("resourceVersion"), 10, 64)
	if err != nil {
		WriteJSON(w, http.StatusBadRequest, StatusObject(http.StatusBadRequest, metav1.StatusReasonBadRequest, "want an integer resourceVersion"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintln(w, Event("MODIFIED", Object("ConfigMap", "a", strconv.FormatUint(rv+1, 10))))
}

// PagedList answers a LIST with objs at resourceVersion rv, in pages of the
// limit asked, the continue token being the index of the next item. If
// brokenPage > 0, that page is cut off half-way by a connection reset.
func PagedList(rv string, brokenPage int, objs ...map[string]any) http.HandlerFunc {
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

// Raw answers with code, content type and body as given.
func Raw(code int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// Status answers with a Status of code and reason.
func Status(code int, reason metav1.StatusReason) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, code, StatusObject(code, reason, "the hostile server says no"))
	}
}

// StatusObject is a metav1.Status as JSON.
func StatusObject(code int, reason metav1.StatusReason, msg string) map[string]any {
	return map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason, "message": msg}
}

// WriteJSON writes body as JSON with code.
func WriteJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// Object is an object of kind in namespace "ns" as JSON.
func Object(kind, name, rv string) map[string]any {
	return map[string]any{"kind": kind, "apiVersion": "v1",
		"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": rv}}
}

// Event is one line of a JSON watch stream.
func Event(typ string, obj map[string]any) string {
	b, _ := json.Marshal(map[string]any{"type": typ, "object": obj})
	return string(b)
}

// MaxAttempts is the most requests a step that keeps failing can make
// within w, with a backoff from initial doubling to max: the first at
// once, each later one after at least the next base wait. Jitter only
// lengthens waits, so it cannot raise the count.
func MaxAttempts(w, initial, max time.Duration) int {
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

// Within counts the times in [from, from+w].
func Within(times []time.Time, from time.Time, w time.Duration) int {
	n := 0
	for _, at := range times {
		if !at.Before(from) && !at.After(from.Add(w)) {
			n++
		}
	}
	return n
}
