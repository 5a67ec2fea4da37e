package fakeapiserver

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// commitLocked applies one write at the next resourceVersion: it stamps
// obj with it, updates current, appends to history and queues the event
// on every watch it concerns. obj becomes the server's; callers pass a
// copy. For a delete, obj is the object's last state. s.mu must be held.
func (s *Server) commitLocked(gr schema.GroupResource, typ string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	s.rv++
	obj.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	key := objectKey{obj.GetNamespace(), obj.GetName()}
	objs := s.current[gr]
	if objs == nil {
		objs = map[objectKey]*unstructured.Unstructured{}
		s.current[gr] = objs
	}
	prev := objs[key]
	if typ == deleted {
		delete(objs, key)
	} else {
		objs[key] = obj
	}
	s.encoded.add(obj)
	c := change{gr: gr, typ: typ, obj: obj, prev: prev, rv: s.rv}
	s.history = append(s.history, c)
	for w := range s.watchers {
		w.offer(c)
	}
	return obj
}

// Event types, as watch.EventType spells them.
const (
	added    = "ADDED"
	modified = "MODIFIED"
	deleted  = "DELETED"
	bookmark = "BOOKMARK"
	errorEv  = "ERROR"
)

// Compact forgets the history before resourceVersion rv, as etcd's
// compaction at revision rv does, and returns the revision compacted to
// (rv, or the current one if rv is newer; an older rv than the last
// compaction changes nothing). Afterwards:
//
//   - a WATCH from resourceVersion N with N+1 < rv gets one ERROR event,
//     410 Gone (reason Expired), and ends: the events after N are gone.
//     (From rv-1 it still works: etcd keeps the write at rv itself.)
//   - a LIST at an exact resourceVersion older than rv answers 410, and so
//     does a continue token from a list older than rv.
//
// Open watches are not affected: they already have their events.
func (s *Server) Compact(rv int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rv = min(rv, s.rv)
	if rv <= s.compactedRV {
		return s.compactedRV
	}
	// Every resource with a past, served now or not: a removed CRD's
	// deletes leave the history here, and its base must take them, or
	// installed again it would show its old objects at older versions.
	for gr := range s.resourcesWithStateLocked() {
		// A copy: at the latest rv, stateAtLocked is current's own map,
		// which the next write changes in place.
		s.base[gr] = maps.Clone(s.stateAtLocked(gr, rv))
	}
	i, _ := slices.BinarySearchFunc(s.history, rv, func(c change, rv int64) int { return cmp.Compare(c.rv, rv) })
	s.history = slices.Clone(s.history[i:])
	s.compactedRV = rv
	s.encoded.retain(s.heldLocked())
	return rv
}

// resourcesWithStateLocked returns every resource served now or holding
// objects, now or at the last compaction. s.mu must be held.
func (s *Server) resourcesWithStateLocked() map[schema.GroupResource]bool {
	grs := map[schema.GroupResource]bool{}
	for gr := range s.resources {
		grs[gr] = true
	}
	for gr := range s.current {
		grs[gr] = true
	}
	for gr := range s.base {
		grs[gr] = true
	}
	return grs
}

// heldLocked returns every object the server holds: current, in the
// base or in the history. s.mu must be held.
func (s *Server) heldLocked() map[*unstructured.Unstructured]bool {
	held := map[*unstructured.Unstructured]bool{}
	for _, state := range []map[schema.GroupResource]map[objectKey]*unstructured.Unstructured{s.current, s.base} {
		for _, objs := range state {
			for _, u := range objs {
				held[u] = true
			}
		}
	}
	for _, c := range s.history {
		held[c.obj] = true
		if c.prev != nil {
			held[c.prev] = true
		}
	}
	return held
}

// stateAtLocked returns resource gr's objects at resourceVersion rv,
// which must be compactedRV or later: base with the writes up to rv
// applied. Cost: O(objects + history). At the latest rv it is current's
// own map, which writes change: read it under s.mu, keep a copy. s.mu
// must be held.
func (s *Server) stateAtLocked(gr schema.GroupResource, rv int64) map[objectKey]*unstructured.Unstructured {
	if rv >= s.rv {
		return s.current[gr]
	}
	state := maps.Clone(s.base[gr])
	if state == nil {
		state = map[objectKey]*unstructured.Unstructured{}
	}
	for _, c := range s.history {
		if c.rv > rv {
			break
		}
		if c.rv <= s.compactedRV || c.gr != gr {
			continue // already in base, or another resource's
		}
		key := objectKey{c.obj.GetNamespace(), c.obj.GetName()}
		if c.typ == deleted {
			delete(state, key)
		} else {
			state[key] = c.obj
		}
	}
	return state
}

// changesAfterLocked returns the writes after resourceVersion rv, oldest
// first; rv+1 must not be older than compactedRV. s.mu must be held.
func (s *Server) changesAfterLocked(rv int64) []change {
	i, _ := slices.BinarySearchFunc(s.history, rv+1, func(c change, rv int64) int { return cmp.Compare(c.rv, rv) })
	return s.history[i:]
}

// sortedKeys returns state's keys in the order LIST pages and initial
// watch events come: "namespace/name", as etcd orders its keys.
func sortedKeys(state map[objectKey]*unstructured.Unstructured) []objectKey {
	keys := slices.Collect(maps.Keys(state))
	slices.SortFunc(keys, func(a, b objectKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// Objects returns copies of resource gvr's objects now, in key order,
// for a test to compare with what a cache holds. An unknown resource has
// none.
func (s *Server) Objects(gvr schema.GroupVersionResource) []*unstructured.Unstructured {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := s.current[gvr.GroupResource()]
	out := make([]*unstructured.Unstructured, 0, len(state))
	for _, k := range sortedKeys(state) {
		out = append(out, state[k].DeepCopy())
	}
	return out
}

// Object returns a copy of resource gvr's object namespace/name now,
// and whether there is one: Objects' answer for one object, at the cost
// of one copy.
func (s *Server) Object(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.current[gvr.GroupResource()][objectKey{namespace, name}]
	if u == nil {
		return nil, false
	}
	return u.DeepCopy(), true
}
