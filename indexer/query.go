package indexer

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/listwatch/informer"
)

// HasIndex reports whether an index called name exists. Indices are never
// removed, so once true it stays true; NamespaceIndex, built in, always
// exists. Cost: O(1).
func (i *Indexer[T]) HasIndex(name string) bool {
	if name == NamespaceIndex {
		return true
	}
	i.mu.RLock()
	defer i.mu.RUnlock()
	_, ok := i.indices[name]
	return ok
}

// ByIndex returns the objects whose IndexFunc for the index called name
// returned value, in no particular order; the result is empty when no
// object has that value. Cost: O(k) for k matching objects, however many
// objects are stored. An unknown index name is an error that names it.
//
// ByIndex(NamespaceIndex, ns) is Namespace(ns): a copy of the namespace's
// slice (a memmove), all it does under the read lock, however large the
// namespace, so a writer waits for it at most that long.
//
// The slice is new; the objects in it are shared with the cache: do not
// modify them.
func (i *Indexer[T]) ByIndex(name, value string) ([]T, error) {
	if name == NamespaceIndex {
		return i.Namespace(value), nil
	}
	i.mu.RLock()
	defer i.mu.RUnlock()
	x, ok := i.indices[name]
	if !ok {
		return nil, i.unknownIndex("ByIndex", name)
	}
	keys := x.byValue[value]
	out := make([]T, 0, len(keys))
	for key := range keys {
		obj, _ := i.getLocked(key) // filed keys are stored: the index is exact
		out = append(out, obj)
	}
	return out, nil
}

// Namespace returns the objects stored in namespace ns ("" for
// cluster-scoped objects), in no particular order: ByIndex(NamespaceIndex,
// ns), which cannot fail. Cost: one copy of the namespace's slice.
//
// The new slice is allocated before the read lock is taken (the size read
// under a first, brief one, with room for an eighth more), so the lock is
// held only for the copy: a writer waits for a reader's allocation, or
// for the garbage collector work an allocation may have to do, only when
// the namespace grew by more than an eighth between the two locks, and
// the copy must allocate again.
//
// The slice is new; the objects in it are shared with the cache: do not
// modify them.
func (i *Indexer[T]) Namespace(ns string) []T {
	i.mu.RLock()
	size := 0
	if sp, ok := i.spaces[ns]; ok {
		size = sp.len()
	}
	i.mu.RUnlock()
	out := make([]T, 0, size+size/8) // room for a few objects added meanwhile

	i.mu.RLock()
	defer i.mu.RUnlock()
	if sp, ok := i.spaces[ns]; ok {
		out = append(out, sp.objs...) // allocates again only if it grew by more than an eighth
	}
	return out
}

// IndexKeys is ByIndex returning keys instead of objects, in a new slice.
// Cost: O(k) for k matching objects.
func (i *Indexer[T]) IndexKeys(name, value string) ([]informer.Key, error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if name == NamespaceIndex {
		var keys []informer.Key
		if sp, ok := i.spaces[value]; ok {
			keys = make([]informer.Key, len(sp.names))
			for n, objName := range sp.names {
				keys[n] = informer.Key{Namespace: value, Name: objName}
			}
		}
		return keys, nil
	}
	x, ok := i.indices[name]
	if !ok {
		return nil, i.unknownIndex("IndexKeys", name)
	}
	return slices.AppendSeq(make([]informer.Key, 0, len(x.byValue[value])), maps.Keys(x.byValue[value])), nil
}

// IndexValues returns the values of the index called name that at least
// one stored object has, in no particular order, in a new slice. Cost: O(v)
// for v distinct values.
func (i *Indexer[T]) IndexValues(name string) ([]string, error) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	if name == NamespaceIndex {
		return slices.AppendSeq(make([]string, 0, len(i.spaces)), maps.Keys(i.spaces)), nil
	}
	x, ok := i.indices[name]
	if !ok {
		return nil, i.unknownIndex("IndexValues", name)
	}
	return slices.AppendSeq(make([]string, 0, len(x.byValue)), maps.Keys(x.byValue)), nil
}

// unknownIndex is the error for a lookup in an index that does not exist;
// it lists the ones that do. The caller holds mu.
func (i *Indexer[T]) unknownIndex(op, name string) error {
	have := append([]string{NamespaceIndex + " (built in)"}, i.names...)
	return fmt.Errorf("indexer: %s: no index named %q (indices: %s)", op, name, strings.Join(have, ", "))
}
