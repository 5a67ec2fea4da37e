package fakeapiserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Fault is what WithFaults does to one request before (or instead of)
// serving it. The zero Fault serves it untouched.
type Fault struct {
	// Latency delays the request this long before it is served (on the
	// clock of the goroutine serving it: simulated time inside a synctest
	// bubble); with Hang and Until, after the hang ends, so that requests
	// let go together can still be served apart. If the client gives up
	// meanwhile, nothing is served.
	Latency time.Duration
	// Hang never answers: the request waits until the client's context
	// ends (its timeout, or a cancel), as a request to a stalled server.
	Hang bool
	// Until, with Hang, ends the hang when it is closed: the request is
	// then served, late, as a stalled server that recovers (or a network
	// that heals) serves what it held, writes included. Nil: the hang
	// lasts until the client gives up.
	Until <-chan struct{}
	// Status answers with this code instead of serving the request: a
	// Status whose reason is the code's (409 Conflict, 429
	// TooManyRequests, 500 InternalError, 503 ServiceUnavailable, ...).
	// The server never sees the request.
	Status int
	// RetryAfter, with Status, is the Retry-After the answer carries, in
	// seconds, as a real server's 429 does. Zero sends none.
	RetryAfter int
	// Landed, with Status, serves the request first and answers Status
	// in place of its answer, as kube-apiserver answers a write that etcd
	// committed too slowly (500 ServerTimeout, with a Retry-After): the
	// write lands though its client sees it fail, and a client that
	// retries it meets its own write.
	Landed bool
	// Drop closes the connection without an answer, as a network cut
	// does: the client sees an EOF or a reset.
	Drop bool
	// AnswerLost serves the request, then closes the connection without
	// its answer, as a cut after the server acted does: a write lands
	// though its client sees it fail, an EOF or a reset. With Hang and
	// Until, after the hang ends. A watch is served only until it would
	// send its headers.
	AnswerLost bool
}

// Injector chooses the Fault for each request; it is called once per
// request, from the request's goroutine, so it may keep state behind a
// lock (a seeded random source, a schedule, a counter).
type Injector func(r *http.Request) Fault

// WithFaults wraps a handler (a Server, usually) so that each request
// first meets the Fault that inject chooses. Faults live here, outside
// the Server, so the Server itself stays a faithful model of
// kube-apiserver and every fault is visible in one place.
func WithFaults(next http.Handler, inject Injector) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := inject(r)
		if (f.Latency > 0 || f.Hang) && !bufferBody(r) {
			return
		}
		if f.Hang {
			select {
			case <-r.Context().Done():
				return
			case <-f.Until:
			}
		}
		if f.Latency > 0 {
			t := time.NewTimer(f.Latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		switch {
		case f.AnswerLost:
			serveUnanswered(next, r)
			panic(http.ErrAbortHandler) // net/http closes the connection, unlogged
		case f.Hang:
			next.ServeHTTP(w, r)
		case f.Drop:
			panic(http.ErrAbortHandler)
		case f.Status != 0:
			if f.Landed {
				serveUnanswered(next, r)
			}
			err := apierrors.NewGenericServerResponse(f.Status, verbOf(r), schema.GroupResource{}, "",
				fmt.Sprintf("injected fault: %d", f.Status), f.RetryAfter, false)
			if f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
			}
			writeError(w, format{}, err)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// bufferBody reads r's body into memory and puts it back, as a server
// reads a request before it stalls: only once the body is read does
// net/http watch the connection, and end r's context when the client
// gives up. Without it a delayed or hung write whose client has gone
// would still be served. It reports false if the body could not be read
// (the client went first).
func bufferBody(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return true
}

func verbOf(r *http.Request) string {
	switch r.Method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	if r.URL.Query().Get("watch") == "true" {
		return "watch"
	}
	return "get"
}

// serveUnanswered serves r into a recorder, and ends r's context for the
// handler as soon as it starts its answer: a write has been applied by
// then, and a watch, which would stream until it ends, stops there.
func serveUnanswered(next http.Handler, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	next.ServeHTTP(&answerStarts{ResponseRecorder: httptest.NewRecorder(), started: cancel}, r.WithContext(ctx))
}

// answerStarts is a recorder that calls started when the answer begins.
type answerStarts struct {
	*httptest.ResponseRecorder
	started func()
}

func (a *answerStarts) WriteHeader(code int) {
	a.started()
	a.ResponseRecorder.WriteHeader(code)
}

func (a *answerStarts) Write(b []byte) (int, error) {
	a.started()
	return a.ResponseRecorder.Write(b)
}
