package indexer

import (
	"fmt"
	"maps"
	"slices"

	"github.com/listwatch/informer"
)

// index is one named secondary index: for each value its IndexFunc
// returned, the set of keys whose stored object returned it.
//
// It is kept in both directions. byValue answers ByIndex. byKey remembers
// which values each key was filed under, so moving or removing a key never
// runs the IndexFunc on the old object again. That protects the index from
// pitfall 2: if a reader had changed the cached object in place (its
// labels, say), recomputing from it would give the wrong old values and
// leave the key behind under a value it no longer has.
//
// index has no lock of its own: the Indexer's mu guards it.
type index[T informer.Object] struct {
	fn IndexFunc[T]

	// byValue[v] is the set of keys filed under v. Invariants: a key is in
	// byValue[v] iff v is in byKey[key]; no set is empty (a value's entry
	// is deleted with its last key, so nothing leaks).
	byValue map[string]map[informer.Key]struct{}

	// byKey[key] lists the values key is filed under, sorted and without
	// duplicates. Invariant: it has an entry iff that list is not empty.
	byKey map[informer.Key][]string
}

func newIndex[T informer.Object](fn IndexFunc[T]) *index[T] {
	return &index[T]{
		fn:      fn,
		byValue: map[string]map[informer.Key]struct{}{},
		byKey:   map[informer.Key][]string{},
	}
}

// valuesOf runs the IndexFunc on obj and returns its values sorted and
// without duplicates. It does not change the index.
func (x *index[T]) valuesOf(obj T) ([]string, error) {
	values, err := x.fn(obj)
	if err != nil || len(values) <= 1 {
		return values, err
	}
	if isSortedSet(values) {
		return values, nil
	}
	values = slices.Clone(values) // the IndexFunc may still own its slice
	slices.Sort(values)
	return slices.Compact(values), nil
}

// file makes values (sorted, no duplicates; nil to remove the key) the
// exact set of values key is filed under. It returns the values key had
// before, and whether they changed. Cost: proportional to the number of
// old and new values (usually one each); no map is written when nothing
// changed.
func (x *index[T]) file(key informer.Key, values []string) (old []string, changed bool) {
	old = x.byKey[key]
	if slices.Equal(old, values) {
		return old, false
	}
	for _, v := range old {
		if _, keep := slices.BinarySearch(values, v); !keep {
			keys := x.byValue[v]
			delete(keys, key)
			if len(keys) == 0 {
				delete(x.byValue, v)
			}
		}
	}
	for _, v := range values {
		if _, had := slices.BinarySearch(old, v); !had {
			keys := x.byValue[v]
			if keys == nil {
				keys = map[informer.Key]struct{}{}
				x.byValue[v] = keys
			}
			keys[key] = struct{}{}
		}
	}
	if len(values) == 0 {
		delete(x.byKey, key)
	} else {
		x.byKey[key] = slices.Clone(values) // ours alone from now on
	}
	return old, true
}

// refile files key under values in the index called name, and returns
// the KindIndexChanged detail of the change, "" if there was none or no
// trace hook. The caller holds mu, and emits the detail once the whole
// write is applied.
func (i *Indexer[T]) refile(name string, key informer.Key, values []string) string {
	old, changed := i.indices[name].file(key, values)
	if changed && i.trace != nil {
		return indexChange(name, old, values)
	}
	return ""
}

// emitIndexChanges emits a KindIndexChanged event for each detail refile
// returned, in index name order. The caller holds mu.
func (i *Indexer[T]) emitIndexChanges(key informer.Key, details []string) {
	for _, detail := range details {
		if detail != "" {
			i.emit(KindIndexChanged, key, "", detail)
		}
	}
}

func isSortedSet(values []string) bool {
	for n := 1; n < len(values); n++ {
		if values[n-1] >= values[n] {
			return false
		}
	}
	return true
}

// AddIndexers adds named indices and builds each one from the objects
// already stored. Cost: O(n) IndexFunc calls and index work per new index.
//
// It is atomic: it fails, adding none of them, if a name is already an
// index, an IndexFunc is nil, or an IndexFunc returns an error for a stored
// object; the error names the index (and the object's key).
func (i *Indexer[T]) AddIndexers(indexers map[string]IndexFunc[T]) error {
	names := slices.Sorted(maps.Keys(indexers))

	i.mu.Lock()
	defer i.mu.Unlock()
	for _, name := range names { // validate the names: cheap, so first
		if _, exists := i.indices[name]; exists {
			return fmt.Errorf("indexer: AddIndexers: an index named %q already exists", name)
		}
		if err := checkIndex(name, indexers[name]); err != nil {
			return fmt.Errorf("indexer: AddIndexers: %w", err)
		}
	}
	built := make([]*index[T], len(names)) // build each index aside
	for n, name := range names {
		x := newIndex(indexers[name])
		for ns, sp := range i.spaces {
			for m, obj := range sp.objs {
				key := informer.Key{Namespace: ns, Name: sp.names[m]}
				values, err := x.valuesOf(obj)
				if err != nil {
					return fmt.Errorf("indexer: AddIndexers: %s: index %q: %w", key, name, err)
				}
				x.file(key, values)
			}
		}
		built[n] = x
	}
	for n, name := range names { // every one is complete: install them all
		i.indices[name] = built[n]
	}
	i.names = slices.Sorted(maps.Keys(i.indices))
	if i.trace != nil { // only now: a hook that panics cannot stop an install half-way
		for n, name := range names {
			detail := fmt.Sprintf("%s: %d values over %d objects", name, len(built[n].byValue), i.count)
			i.emit(KindIndexAdded, informer.Key{}, "", detail)
		}
	}
	return nil
}
