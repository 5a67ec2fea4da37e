package sharedinformer_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
)

// zooGroup is the one API group a zooServer serves.
const zooGroup = "zoo.listwatch.dev"

// zooServer stands in for a kube-apiserver serving the custom resources of
// one group, zooGroup, in the versions a test chooses: discovery (/api,
// /apis, /apis/GROUP/VERSION) and LIST (paged when asked) and WATCH of
// /apis/GROUP/VERSION/RESOURCE. A version that does not serve a resource
// answers 404, as a real server does once a CRD stops serving it. Every
// resource holds the same objects in each version it is served in.
//
// It is for orders of events a real control plane cannot be made to
// take on cue: a resource deleted between two pages of a list, a watch
// ended the moment a version stops being served.
type zooServer struct {
	*httptest.Server

	mu sync.Mutex
	// versions are the versions serving each resource, preferred first;
	// none: its CRD is deleted. Guarded by mu.
	versions map[string][]string
	// objects are each resource's objects, by name. Guarded by mu.
	objects map[string][]string
	// rv is the resourceVersion of every list. Guarded by mu.
	rv int
	// ended is closed to end the watches open now. Guarded by mu.
	ended chan struct{}
	// before, if set, runs before a LIST or WATCH is answered, without
	// mu held: a test's hook to change what is served or hold the request.
	before func(r *http.Request)
}

// newZooServer starts a zooServer serving nothing; it closes at cleanup.
func newZooServer(t *testing.T) *zooServer {
	z := &zooServer{versions: map[string][]string{}, objects: map[string][]string{}, rv: 1, ended: make(chan struct{})}
	z.Server = httptest.NewServer(http.HandlerFunc(z.serve))
	t.Cleanup(func() { z.endWatches(); z.Close() })
	return z
}

// config is a rest.Config for the server.
func (z *zooServer) config() *rest.Config { return &rest.Config{Host: z.URL} }

// serveIn makes resource served in versions alone, preferred first; none
// deletes it.
func (z *zooServer) serveIn(resource string, versions ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.versions[resource] = versions
	z.rv++
}

// create adds objects named names to resource, in namespace "ns".
func (z *zooServer) create(resource string, names ...string) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.objects[resource] = append(z.objects[resource], names...)
	z.rv++
}

// endWatches ends every watch open now, as a server does when a CRD
// changes.
func (z *zooServer) endWatches() {
	z.mu.Lock()
	defer z.mu.Unlock()
	close(z.ended)
	z.ended = make(chan struct{})
}

// hook sets the function run before each LIST and WATCH is answered.
func (z *zooServer) hook(before func(r *http.Request)) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.before = before
}

func (z *zooServer) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/api":
		writeJSON(w, http.StatusOK, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case r.URL.Path == "/apis":
		writeJSON(w, http.StatusOK, z.groups())
	case len(parts) == 3 && parts[0] == "apis" && parts[1] == zooGroup:
		z.resources(w, parts[2])
	case len(parts) == 4 && parts[0] == "apis" && parts[1] == zooGroup:
		z.mu.Lock()
		before := z.before
		z.mu.Unlock()
		if before != nil {
			before(r)
		}
		if watch := r.URL.Query().Get("watch"); watch == "true" || watch == "1" {
			z.watch(w, r, parts[2], parts[3])
			return
		}
		z.list(w, r, parts[2], parts[3])
	default:
		notFound(w)
	}
}

// servedLocked reports whether version serves resource. The caller holds
// mu.
func (z *zooServer) servedLocked(version, resource string) bool {
	return slices.Contains(z.versions[resource], version)
}

// groups is /apis: zooGroup with every version that serves a resource,
// or no group at all once none does.
func (z *zooServer) groups() map[string]any {
	z.mu.Lock()
	defer z.mu.Unlock()
	var versions []map[string]any
	seen := map[string]bool{}
	for _, resource := range slices.Sorted(maps.Keys(z.versions)) {
		for _, v := range z.versions[resource] {
			if !seen[v] {
				seen[v] = true
				versions = append(versions, map[string]any{"groupVersion": zooGroup + "/" + v, "version": v})
			}
		}
	}
	groups := []map[string]any{}
	if len(versions) > 0 {
		groups = append(groups, map[string]any{"name": zooGroup, "versions": versions, "preferredVersion": versions[0]})
	}
	return map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
}

// resources is /apis/GROUP/VERSION: the resources version serves, or 404
// when it serves none.
func (z *zooServer) resources(w http.ResponseWriter, version string) {
	z.mu.Lock()
	var list []map[string]any
	for _, resource := range slices.Sorted(maps.Keys(z.versions)) {
		if z.servedLocked(version, resource) {
			list = append(list, map[string]any{"name": resource, "singularName": "", "namespaced": true,
				"kind": kindOf(resource), "verbs": []string{"get", "list", "watch"}})
		}
	}
	z.mu.Unlock()
	if len(list) == 0 {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": zooGroup + "/" + version, "resources": list})
}

// list answers a LIST, in pages of the limit asked, the continue token
// being the index of the next object.
func (z *zooServer) list(w http.ResponseWriter, r *http.Request, version, resource string) {
	z.mu.Lock()
	if !z.servedLocked(version, resource) {
		z.mu.Unlock()
		notFound(w)
		return
	}
	names, rv := slices.Clone(z.objects[resource]), strconv.Itoa(z.rv)
	z.mu.Unlock()
	from, _ := strconv.Atoi(r.URL.Query().Get("continue"))
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	if limit <= 0 {
		limit = len(names)
	}
	to := min(from+limit, len(names))
	meta := map[string]any{"resourceVersion": rv}
	if to < len(names) {
		meta["continue"] = strconv.Itoa(to)
	}
	items := []map[string]any{}
	for _, name := range names[from:to] {
		items = append(items, map[string]any{"apiVersion": zooGroup + "/" + version, "kind": kindOf(resource),
			"metadata": map[string]any{"name": name, "namespace": "ns", "resourceVersion": "1"}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": zooGroup + "/" + version, "kind": kindOf(resource) + "List", "metadata": meta, "items": items})
}

// watch answers a WATCH with an open stream that sends nothing and ends
// with endWatches, or 404 when version does not serve resource.
func (z *zooServer) watch(w http.ResponseWriter, r *http.Request, version, resource string) {
	z.mu.Lock()
	served, ended := z.servedLocked(version, resource), z.ended
	z.mu.Unlock()
	if !served {
		notFound(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
	case <-ended:
	}
}

// kindOf is the kind a resource of the zoo holds: "octopodes" holds
// "Octopodes", which is all a test needs.
func kindOf(resource string) string { return strings.ToUpper(resource[:1]) + resource[1:] }

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure",
		"reason": "NotFound", "code": http.StatusNotFound, "message": "the server could not find the requested resource"})
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// zooResource is resource of the zoo in version.
func zooResource(version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: zooGroup, Version: version, Resource: resource}
}

// callLog is a Handler of zoo objects that records each call as a line
// ("add a (initial)", "delete a (final state unknown)") and lets a test
// wait for a line without polling.
type callLog struct {
	mu    sync.Mutex
	calls []string
	more  chan struct{} // closed and replaced at each call; guarded by mu
}

func newCallLog() *callLog { return &callLog{more: make(chan struct{})} }

// snapshot is a copy of the calls so far.
func (c *callLog) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *callLog) record(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, line)
	close(c.more)
	c.more = make(chan struct{})
}

func (c *callLog) OnAdd(obj *unstructured.Unstructured, initial bool) {
	if initial {
		c.record("add " + obj.GetName() + " (initial)")
	} else {
		c.record("add " + obj.GetName())
	}
}

func (c *callLog) OnUpdate(_, obj *unstructured.Unstructured) { c.record("update " + obj.GetName()) }

func (c *callLog) OnDelete(obj *unstructured.Unstructured, unknown bool) {
	if unknown {
		c.record("delete " + obj.GetName() + " (final state unknown)")
	} else {
		c.record("delete " + obj.GetName())
	}
}

// waitFor waits until line has been recorded, and returns every call
// recorded by then. It waits on the handler's calls, for as long as
// hangGuard: t.Context() ends only after the test function returns, so
// waiting on it alone would hang a test whose line never comes until the
// binary's -timeout, taking every later test with it.
func (c *callLog) waitFor(t *testing.T, line string) []string {
	t.Helper()
	guard := time.After(hangGuard)
	for {
		c.mu.Lock()
		calls, more := slices.Clone(c.calls), c.more
		c.mu.Unlock()
		if slices.Contains(calls, line) {
			return calls
		}
		select {
		case <-more:
		case <-guard:
			require.FailNow(t, "no such call within the hang guard", "waiting %v for %q; calls so far: %q", hangGuard, line, calls)
		}
	}
}

// eventLog keeps trace events and lets a test wait until they show what
// it waits for, without polling.
type eventLog struct {
	mu     sync.Mutex
	events []informer.TraceEvent
	more   chan struct{} // closed and replaced at each event; guarded by mu
}

func newEventLog() *eventLog { return &eventLog{more: make(chan struct{})} }

// hook is the trace hook that fills the log.
func (l *eventLog) hook(e informer.TraceEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	close(l.more)
	l.more = make(chan struct{})
}

// waitFor waits until done says the events so far are what the test
// waits for, and returns them; it fails the test after hangGuard.
func (l *eventLog) waitFor(t *testing.T, what string, done func([]informer.TraceEvent) bool) []informer.TraceEvent {
	t.Helper()
	guard := time.After(hangGuard)
	for {
		l.mu.Lock()
		events, more := slices.Clone(l.events), l.more
		l.mu.Unlock()
		if done(events) {
			return events
		}
		select {
		case <-more:
		case <-guard:
			require.FailNow(t, "not within the hang guard", "waiting %v for %s", hangGuard, what)
		}
	}
}

// errLog keeps what OnError receives and lets a test wait for an error.
type errLog struct {
	mu   sync.Mutex
	errs []error
	more chan struct{} // closed and replaced at each error; guarded by mu
}

func newErrLog() *errLog { return &errLog{more: make(chan struct{})} }

func (l *errLog) hook(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
	close(l.more)
	l.more = make(chan struct{})
}

// waitFor waits for the first error that match accepts, and returns it;
// it fails the test after hangGuard.
func (l *errLog) waitFor(t *testing.T, what string, match func(error) bool) error {
	t.Helper()
	guard := time.After(hangGuard)
	for {
		l.mu.Lock()
		errs, more := slices.Clone(l.errs), l.more
		l.mu.Unlock()
		for _, err := range errs {
			if match(err) {
				return err
			}
		}
		select {
		case <-more:
		case <-guard:
			require.FailNow(t, "no such error within the hang guard", "waiting %v for %s; errors so far: %v", hangGuard, what, errs)
		}
	}
}
