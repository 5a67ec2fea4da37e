package sharding_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/testenv"
)

// fakeCluster is the control plane of a test that runs in a
// testing/synctest bubble: a fake API server (package fakeapiserver) on
// an in-memory network. The lease durations, renews and polls such a
// test waits out pass in simulated time, which costs no real time and
// does not stretch on a loaded machine. The tests' subject is the
// sharder's and the members' logic, not the wire; the fake is checked
// against a real kube-apiserver by fakeapiserver's conformance test.
type fakeCluster struct {
	// ns is the namespace the test works in; it exists.
	ns string
	// cfg reaches the server, through the test's faults if it has any,
	// with room for a burst of writes (fast).
	cfg *rest.Config
	// core is a core/v1 client of cfg.
	core *rest.RESTClient
}

// newFakeCluster starts a fake API server for t, which must be running
// in a synctest bubble, and closes it when t ends. inject, if not nil,
// chooses a fault for every request (fakeapiserver.WithFaults).
func newFakeCluster(t *testing.T, inject fakeapiserver.Injector) *fakeCluster {
	t.Helper()
	var handler http.Handler = fakeapiserver.New()
	if inject != nil {
		handler = fakeapiserver.WithFaults(handler, inject)
	}
	net := fakeapiserver.ServeInMemory(handler)
	t.Cleanup(net.Close)
	cfg := fast(net.Config())
	return &fakeCluster{ns: "default", cfg: cfg, core: must(testenv.CoreV1Client(cfg))}
}

// as is the cluster's config for user, whom an Injector tells by the
// user agent (the fake authenticates no one).
func (c *fakeCluster) as(user string) *rest.Config {
	cfg := rest.CopyConfig(c.cfg)
	cfg.UserAgent = user
	return cfg
}

// forbidUntilGranted answers 403 Forbidden to the requests of user that
// match, until granted is set: what the sharder sees of RBAC before and
// after an admin binds it a Role that allows them.
func forbidUntilGranted(user string, match func(*http.Request) bool, granted *atomic.Bool) fakeapiserver.Injector {
	return func(r *http.Request) fakeapiserver.Fault {
		if r.UserAgent() == user && match(r) && !granted.Load() {
			return fakeapiserver.Fault{Status: http.StatusForbidden}
		}
		return fakeapiserver.Fault{}
	}
}
