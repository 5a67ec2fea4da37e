package indexer

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

// cm returns a ConfigMap with the given namespace, name and labels, given
// as key, value pairs.
func cm(namespace, name string, labelPairs ...string) *corev1.ConfigMap {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if len(labelPairs) > 0 {
		obj.Labels = map[string]string{}
		for n := 0; n+1 < len(labelPairs); n += 2 {
			obj.Labels[labelPairs[n]] = labelPairs[n+1]
		}
	}
	return obj
}

func key(namespace, name string) informer.Key {
	return informer.Key{Namespace: namespace, Name: name}
}

// standardIndexers are the indices most tests use (with the built-in
// namespace index).
func standardIndexers() map[string]IndexFunc[*corev1.ConfigMap] {
	return map[string]IndexFunc[*corev1.ConfigMap]{
		"app": LabelIndexFunc[*corev1.ConfigMap]("app"),
	}
}

// failOn returns an IndexFunc that fails for objects named name and files
// every other object under its "app" label.
func failOn(name string) IndexFunc[*corev1.ConfigMap] {
	return func(obj *corev1.ConfigMap) ([]string, error) {
		if obj.Name == name {
			return nil, fmt.Errorf("cannot index %s", name)
		}
		return LabelIndexFunc[*corev1.ConfigMap]("app")(obj)
	}
}

// state is everything observable about an Indexer, in comparable form:
// the stored objects by key, and every index as value → sorted keys.
type state struct {
	Items   map[informer.Key]*corev1.ConfigMap
	Indices map[string]map[string][]informer.Key
}

func stateOf(t *testing.T, idx *Indexer[*corev1.ConfigMap]) state {
	t.Helper()
	s := state{Items: map[informer.Key]*corev1.ConfigMap{}, Indices: map[string]map[string][]informer.Key{}}
	for _, obj := range idx.List() {
		s.Items[informer.Key{Namespace: obj.Namespace, Name: obj.Name}] = obj
	}
	idx.mu.RLock()
	names := append([]string{NamespaceIndex}, idx.names...)
	idx.mu.RUnlock()
	for _, name := range names {
		values, err := idx.IndexValues(name)
		require.NoError(t, err)
		s.Indices[name] = map[string][]informer.Key{}
		for _, v := range values {
			keys, err := idx.IndexKeys(name, v)
			require.NoError(t, err)
			slices.SortFunc(keys, compareKeys)
			s.Indices[name][v] = keys
		}
	}
	return s
}

// requireExact checks every internal invariant of idx, and that every
// index equals a brute-force recomputation from the stored objects.
func requireExact(t require.TestingT, idx *Indexer[*corev1.ConfigMap]) {
	idx.mu.RLock()
	defer idx.mu.RUnlock()
	require.Equal(t, slices.Sorted(maps.Keys(idx.indices)), idx.names, "names lists the indices, sorted")
	items := map[informer.Key]*corev1.ConfigMap{}
	for ns, sp := range idx.spaces {
		require.NotZero(t, sp.len(), "no empty namespace is kept")
		require.Len(t, sp.names, len(sp.objs))
		require.Len(t, sp.pos, len(sp.objs))
		for n, obj := range sp.objs {
			require.Equal(t, n, sp.pos[sp.names[n]], "pos says where each name is")
			items[informer.Key{Namespace: ns, Name: sp.names[n]}] = obj
		}
	}
	require.Len(t, items, idx.count, "count is the number of stored objects")
	for k, obj := range items {
		require.Equal(t, k, informer.Key{Namespace: obj.Namespace, Name: obj.Name}, "an object is stored under its own key")
	}
	if idx.detect {
		require.ElementsMatch(t, slices.Collect(maps.Keys(items)), slices.Collect(maps.Keys(idx.copies)), "one deep copy per stored object")
	}
	for name, x := range idx.indices {
		// Recompute the index from scratch.
		want := map[string]map[informer.Key]struct{}{}
		for k, obj := range items {
			values, err := x.fn(obj)
			require.NoError(t, err)
			for _, v := range values {
				if want[v] == nil {
					want[v] = map[informer.Key]struct{}{}
				}
				want[v][k] = struct{}{}
			}
		}
		require.Equal(t, want, x.byValue, "index %q equals a recomputation from the stored objects", name)
		// byKey mirrors byValue, with no empty entries.
		mirror := map[informer.Key][]string{}
		for v, keys := range x.byValue {
			require.NotEmpty(t, keys, "index %q keeps no empty set for value %q", name, v)
			for k := range keys {
				mirror[k] = append(mirror[k], v)
			}
		}
		for k := range mirror {
			slices.Sort(mirror[k])
		}
		require.Equal(t, mirror, x.byKey, "index %q: byKey mirrors byValue", name)
	}
}
