package reflector_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
)

// fakeServer is the fake API server (package fakeapiserver) served in
// memory, for a test inside a testing/synctest bubble: each request
// first meets the fault the test sets, and the times of the LISTs are
// logged on the bubble's clock, so a rate counted over a window is
// exact. The fake's answers are held to the real apiserver's by
// fakeapiserver's conformance test.
type fakeServer struct {
	*fakeapiserver.Server
	mem *fakeapiserver.InMemory

	mu    sync.Mutex
	fault func(*http.Request) fakeapiserver.Fault // guarded by mu; nil serves every request
	lists map[string][]time.Time                  // guarded by mu; GET times by the path's last part: a collection's LISTs
}

// newFakeServer starts a fakeServer; call it inside a bubble. It closes
// at the test's cleanup.
func newFakeServer(t *testing.T) *fakeServer {
	s := &fakeServer{Server: fakeapiserver.New(), lists: map[string][]time.Time{}}
	s.mem = fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(s.Server, s.inject))
	t.Cleanup(s.mem.Close)
	return s
}

func (s *fakeServer) inject(r *http.Request) fakeapiserver.Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" {
		resource := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		s.lists[resource] = append(s.lists[resource], time.Now())
	}
	if s.fault == nil {
		return fakeapiserver.Fault{}
	}
	return s.fault(r)
}

// setFault makes fault choose each later request's fault; nil serves
// them all.
func (s *fakeServer) setFault(fault func(*http.Request) fakeapiserver.Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = fault
}

// listTimes returns the times of the LISTs of resource (a collection's
// plural, such as "configmaps") so far, answered or refused.
func (s *fakeServer) listTimes(resource string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.lists[resource]...)
}

// config reaches the server with rest's client-side rate limit off, so
// only the reflector's own pacing bounds the request rate.
func (s *fakeServer) config() *rest.Config {
	cfg := s.mem.Config()
	cfg.QPS = -1
	return cfg
}
