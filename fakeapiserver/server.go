package fakeapiserver

import (
	"net/http"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Server is a fake kube-apiserver: an http.Handler that serves LIST,
// WATCH, GET, POST, PUT, PATCH (merge), DELETE and discovery for the resources it knows,
// from memory, with one resourceVersion counter for everything (etcd's
// revision). See the package doc for what it models.
//
// Every method is safe to call from any goroutine, and from the test
// while requests are in flight.
type Server struct {
	scheme *runtime.Scheme // the Go types of built-in resources, for protobuf
	codecs serializer.CodecFactory

	mu sync.Mutex
	// resources are the served resources by group and resource name; a
	// custom resource moved to another version keeps its entry (and its
	// objects), with the new version.
	resources map[schema.GroupResource]Resource
	// cacheStart is, for a custom resource, the resourceVersion at which
	// its watch cache starts: when it was last installed or moved, as
	// kube-apiserver builds its storage anew then; a watch from an older
	// resourceVersion expires (see openWatch).
	cacheStart map[schema.GroupResource]int64
	// rv is the resourceVersion of the latest write; the first write takes 2.
	rv int64
	// compactedRV is the last compaction's revision R: the state at R and
	// every write from R on are known, older ones are gone (see Compact).
	compactedRV int64
	// current is every object's latest state; base the state at
	// compactedRV; history every write at compactedRV or later, in
	// resourceVersion order. Invariant: base with the writes after
	// compactedRV applied is current. Stored objects are never modified
	// in place; a write replaces the map entry.
	current, base map[schema.GroupResource]map[objectKey]*unstructured.Unstructured
	history       []change
	// watchers are the open watches; every write queues its event on
	// those it concerns.
	watchers map[*watcher]struct{}
	// uids and names number the UIDs and generated names handed out, so
	// a run is the same every time.
	uids, names int
	// validLabels are the labels labelErrorsLocked passed.
	validLabels map[label]struct{}

	// encoded keeps the stored objects' encodings (its own lock; taken
	// inside mu by commitLocked and Compact, alone by the encoders).
	encoded encodings
}

// objectKey is an object's namespace ("" if cluster-scoped) and name.
type objectKey struct{ namespace, name string }

func (k objectKey) String() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

// change is one write: the event it makes, the object after it (for a
// delete, its last state stamped with the delete's resourceVersion) and
// before it (nil for a create).
type change struct {
	gr        schema.GroupResource
	typ       string // ADDED, MODIFIED or DELETED
	obj, prev *unstructured.Unstructured
	rv        int64
}

// New returns a Server at resourceVersion "1" that serves BuiltIns, with
// the namespaces default, kube-system, kube-public and kube-node-lease.
func New() *Server {
	scheme := builtInScheme()
	s := &Server{
		scheme:      scheme,
		codecs:      serializer.NewCodecFactory(scheme),
		resources:   map[schema.GroupResource]Resource{},
		cacheStart:  map[schema.GroupResource]int64{},
		rv:          1,
		compactedRV: 1,
		current:     map[schema.GroupResource]map[objectKey]*unstructured.Unstructured{},
		base:        map[schema.GroupResource]map[objectKey]*unstructured.Unstructured{},
		watchers:    map[*watcher]struct{}{},
		validLabels: map[label]struct{}{},
	}
	for _, r := range BuiltIns() {
		s.resources[r.GroupResource()] = r
	}
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Namespace")
		u.SetName(ns)
		if _, err := s.create(s.resources[namespaces], u); err != nil {
			panic(err) // cannot happen: an empty server takes any name
		}
	}
	return s
}

var namespaces = schema.GroupResource{Resource: "namespaces"}

// ServeHTTP answers one request, as kube-apiserver would.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.route(w, r)
}

// ResourceVersion returns the resourceVersion of the latest write, the
// one a LIST answers with.
func (s *Server) ResourceVersion() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// ResourceVersionString is ResourceVersion as the API spells it.
func (s *Server) ResourceVersionString() string {
	return strconv.FormatInt(s.ResourceVersion(), 10)
}
