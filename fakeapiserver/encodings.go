package fakeapiserver

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// encodings keeps the encoded forms of stored objects, so that each is
// encoded once per form, not once per answer. A stored object is never
// changed in place (see Server.current), so an encoding, once made, is
// right for every later answer that sends the object in that form: a
// write's event goes to every watch that selects it (a sharded run's
// member informers and its checker in protobuf, its sharders in the
// metadata-only form), and a Lease's renewal is read back by every
// candidate and poll that lists it before the next one.
//
// Only stored objects are kept (commitLocked adds each): one made for a
// single answer (a bookmark, a DELETED for an object that left a
// selector, a served copy) is never asked for again. An object's entry
// goes once the server no longer holds it: Compact drops the entries of
// objects neither current, nor in the base, nor in the history. Between
// compactions the history holds every object written anyway; this adds
// their encodings, a few forms of at most a few KB each.
type encodings struct {
	mu sync.Mutex
	// stored holds, by stored object, its encodings made so far (nil
	// until the first). Guarded by mu. Invariant: every key is an object
	// the server holds in current, base or history.
	stored map[*unstructured.Unstructured]map[encodingKey][]byte
}

// encodingKey is one form of an object: the format negotiated and the
// version and kind it is served as (a custom resource moved to another
// version serves its stored objects at the new one).
type encodingKey struct {
	f   format
	gvk schema.GroupVersionKind
}

// add records u as stored. Cost: O(1).
func (e *encodings) add(u *unstructured.Unstructured) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stored == nil {
		e.stored = map[*unstructured.Unstructured]map[encodingKey][]byte{}
	}
	e.stored[u] = nil
}

// get returns u's encoding in form k, if made. The bytes are shared:
// callers only read them.
func (e *encodings) get(u *unstructured.Unstructured, k encodingKey) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.stored[u][k]
	return b, ok
}

// put keeps b as u's encoding in form k, if u is stored.
func (e *encodings) put(u *unstructured.Unstructured, k encodingKey, b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	forms, ok := e.stored[u]
	if !ok {
		return
	}
	if forms == nil {
		forms = map[encodingKey][]byte{}
		e.stored[u] = forms
	}
	forms[k] = b
}

// retain drops every object that held does not report held. Cost:
// O(objects kept).
func (e *encodings) retain(held map[*unstructured.Unstructured]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for u := range e.stored {
		if !held[u] {
			delete(e.stored, u)
		}
	}
}
