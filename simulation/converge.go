package simulation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// converged checks the state once every fault has ended, and returns
// what is not there yet (nothing: converged):
//
//   - every running replica has an open term in every ring (in the
//     leader-elected scenario: exactly one replica leads);
//   - sharded: every object carries each ring's label naming the member
//     the ring of the open terms assigns it to (a child its parent's),
//     and no drain label;
//   - every parent was reconciled, in each ring, by its owner at its
//     current tick, and has its child in each ring (but a grouped
//     parent, which only its children's events bring: groups.go); no
//     child is an orphan while its parent exists (a grouped seed's
//     controller adopts it); with a Controller of the user's, its
//     Converged says instead;
//   - leader-elected, with the built-in controller: no child outlives
//     its parent, the object its controller reference names by UID (a
//     parent made again under that name is another), since the writers
//     leave a deleted parent's children to it one time in two and it
//     deletes them (removeChild, or the reconcile of the parent made
//     again).
//     Sharded, sharding.Reconciler runs nothing for a parent gone, and a
//     child created late stays, for the sharder's orphan path.
func (w *world) converged() []Violation {
	now := time.Now()
	bad := func(format string, args ...any) []Violation {
		return []Violation{{Invariant: "converged", At: now, Text: fmt.Sprintf(format, args...)}}
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, u := range w.srv.Objects(configMaps) {
		if u.GetNamespace() == Namespace {
			objs[u.GetName()] = u
		}
	}
	owners := map[string]func(*unstructured.Unstructured) string{}
	rings := w.opts.Scenario.rings()
	for _, ring := range rings {
		var members []string
		for _, r := range w.running() {
			t := r.term(ring)
			if t == nil && len(rings) > 1 {
				return bad("replica %s has no open term in ring %s", r.name, ring)
			}
			if t != nil {
				members = append(members, t.member)
			}
		}
		if len(rings) == 1 {
			if len(members) != 1 {
				return bad("%d leaders: %v", len(members), members)
			}
			owners[ring] = func(*unstructured.Unstructured) string { return members[0] }
			continue
		}
		hashRing, err := w.ringOf(ring, members)
		if err != nil {
			return bad("ring %s: %v", ring, err)
		}
		shard := sharding.Shard{Ring: ring}
		owner := func(u *unstructured.Unstructured) string { return hashRing.Owner(sharding.RingKey(placedBy(objs, u))) }
		for _, name := range slices.Sorted(maps.Keys(objs)) {
			u := objs[name]
			want := owner(u)
			if got := u.GetLabels()[shard.Label()]; got != want || u.GetLabels()[shard.DrainLabel()] != "" {
				return bad("%s: ring %s label %q drain %q, want %q", name, ring, got, u.GetLabels()[shard.DrainLabel()], want)
			}
		}
		owners[ring] = owner
	}
	if c := w.opts.Controller; c != nil {
		if c.Converged == nil {
			return nil
		}
		if err := c.Converged(context.Background(), w.admin.Config()); err != nil {
			return bad("the controller has not converged: %v", err)
		}
		return nil
	}
	for _, name := range slices.Sorted(maps.Keys(objs)) {
		u := objs[name]
		ref := metav1.GetControllerOfNoCopy(u)
		if !isParent(name) {
			if w.opts.Scenario == LeaderElected && ref != nil && (objs[ref.Name] == nil || objs[ref.Name].GetUID() != ref.UID) {
				return bad("child %s outlives its parent %s (uid %s)", name, ref.Name, ref.UID)
			}
			if parent, _, child := childOf(name); child && ref == nil && objs[parent] != nil {
				return bad("orphan %s was not adopted by its parent %s", name, parent)
			}
			continue
		}
		if ref != nil { // grouped: its own events reconcile nothing (groups.go)
			continue
		}
		tick, _, _ := unstructured.NestedString(u.Object, "data", "tick")
		for _, ring := range rings {
			want := owners[ring](u) + "/" + tick
			if got := u.GetAnnotations()[ReconciledBy(ring)]; got != want {
				return bad("parent %s: ring %s reconciled by %q, want %q", name, ring, got, want)
			}
			if objs[ChildName(name, ring)] == nil {
				return bad("parent %s has no child in ring %s", name, ring)
			}
		}
	}
	return nil
}

// cachesEqualServer compares, at quiescence, every open term's cache
// (the built-in controller's, or the informer a Controller gave Observe)
// with the server: the objects its selector selects, at the same
// resourceVersions; and what the term's handler was told, replayed,
// with its cache ("handler stream consistent").
func (w *world) cachesEqualServer() []Violation {
	var out []Violation
	rings := w.opts.Scenario.rings()
	for _, r := range w.running() {
		for _, ring := range rings {
			t := r.term(ring)
			if t == nil || t.cache == nil { // no term, or a Controller's that observed nothing
				continue
			}
			want := map[string]string{}
			for _, u := range w.srv.Objects(configMaps) {
				if u.GetNamespace() == Namespace && t.selector.Matches(labels.Set(u.GetLabels())) {
					want[u.GetName()] = u.GetResourceVersion()
				}
			}
			got := t.cache()
			if !maps.Equal(got, want) {
				out = append(out, Violation{Invariant: "cache equals server", At: time.Now(),
					Text: fmt.Sprintf("replica %s ring %s member %s: cache %v, server %v", r.name, ring, t.member, got, want)})
			}
			if told := t.told; told != nil && !maps.Equal(told(), got) {
				out = append(out, Violation{Invariant: "handler stream consistent", At: time.Now(),
					Text: fmt.Sprintf("replica %s ring %s member %s: its handler was told of %v, its cache holds %v", r.name, ring, t.member, told(), got)})
			}
		}
	}
	return append(out, w.shardersCachesEqualServer()...)
}

// shardersCachesEqualServer compares, at quiescence, the cache of every
// object each leading sharder keeps (metadata only) with the server, by
// its size: the sharder exposes no cache, only its informer's
// cached-objects gauge.
func (w *world) shardersCachesEqualServer() []Violation {
	var out []Violation
	want := 0
	for _, u := range w.srv.Objects(configMaps) {
		if u.GetNamespace() == Namespace {
			want++
		}
	}
	for _, r := range w.running() {
		for _, ring := range w.opts.Scenario.rings() {
			m := r.sharder(ring)
			if m == nil {
				continue
			}
			got, ok := cachedObjects(m)
			if !ok || got != want {
				out = append(out, Violation{Invariant: "cache equals server", At: time.Now(),
					Text: fmt.Sprintf("replica %s ring %s: the leading sharder caches %d objects (its gauge found: %v), the server holds %d", r.name, ring, got, ok, want)})
			}
		}
	}
	return out
}

// cachedObjects reads the cached-objects gauge of the one informer of
// ConfigMaps in m, whatever its name.
func cachedObjects(m *metrics.Memory) (int, bool) {
	for line := range strings.Lines(m.String()) {
		line = strings.TrimSpace(line)
		at := strings.LastIndexByte(line, ' ') // label values may hold spaces; the value does not
		if at > 0 && strings.HasPrefix(line, "listwatch_informer_cached_objects{") && strings.Contains(line[:at], `resource="configmaps"`) {
			n, err := strconv.ParseFloat(line[at+1:], 64)
			return int(n), err == nil
		}
	}
	return 0, false
}

// ringOf returns the ring of members for ring name: the one converged
// built last, if its members are these, else a new one, kept.
func (w *world) ringOf(name string, members []string) (*sharding.Ring, error) {
	if r := w.rings[name]; r != nil && slices.Equal(r.Members(), slices.Sorted(slices.Values(members))) {
		return r, nil
	}
	r, err := sharding.NewRing(members, 0)
	if err != nil {
		return nil, err
	}
	if w.rings == nil {
		w.rings = map[string]*sharding.Ring{}
	}
	w.rings[name] = r
	return r, nil
}

// placedBy is the object whose ring key places u: u's controller owner
// if that is an object of objs (by UID), which the sharder makes u
// follow, and so on up; else u itself.
func placedBy(objs map[string]*unstructured.Unstructured, u *unstructured.Unstructured) *unstructured.Unstructured {
	for range len(objs) { // an owner cycle ends somewhere
		ref := metav1.GetControllerOfNoCopy(u)
		if ref == nil {
			return u
		}
		parent := objs[ref.Name]
		if parent == nil || parent.GetUID() != ref.UID {
			return u
		}
		u = parent
	}
	return u
}
