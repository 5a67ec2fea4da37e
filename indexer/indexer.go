package indexer

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
)

// Options configures an [Indexer]. The zero value is a valid configuration:
// no secondary indices, no tracing, no mutation detector.
type Options[T informer.Object] struct {
	// Indexers are the named secondary indices to maintain from the start,
	// such as {"app": LabelIndexFunc[T]("app")}. More can be added later
	// with AddIndexers. The namespace index is built in (NamespaceIndex).
	// Default: none.
	Indexers map[string]IndexFunc[T]

	// Trace receives an event for every change (see the Kind constants).
	// Default nil: no tracing, and no cost: no event is even built.
	Trace informer.TraceHook

	// DetectMutations keeps a deep copy of every stored object so that
	// CheckMutations can tell whether a reader changed a cached object in
	// place (pitfall 2). Default false; it costs a deep copy per write and
	// doubles the cache's memory.
	DetectMutations bool
}

// Indexer is the informer's cache: a thread-safe map from [informer.Key] to
// the latest object seen for that key, plus named secondary indices that
// answer "which objects have this value?" (all ConfigMaps labelled
// app=web) without scanning everything. Every Indexer is also indexed by
// namespace, built in: its storage is laid out by namespace (see space),
// and ByIndex(NamespaceIndex, ns) lists a namespace from that layout.
//
// Unlike a plain map it keeps every index exact on every write, and unlike
// the DeltaFIFO, which holds what is still to be processed, it holds only
// the current state: one object per key, no history.
//
// Objects are stored and returned by pointer, shared with every reader.
// Never modify an object you got from an Indexer (or a Lister over it):
// call DeepCopy first, change the copy, and send the copy to the API server.
//
// An Indexer is safe for concurrent use. Create one with [New].
type Indexer[T informer.Object] struct {
	// mu guards spaces, count, indices, names and copies. Writers (Add,
	// Update, Delete, Replace, AddIndexers) hold it exclusively; readers
	// share it. Index functions and the trace hook run while it is held,
	// so neither may call back into this Indexer.
	mu sync.RWMutex

	// spaces is the cache, by namespace: spaces[ns] holds the objects
	// stored under keys with Namespace ns, and exists iff it holds at
	// least one. count is the number of objects over all spaces.
	spaces map[string]*space[T]
	count  int

	// indices holds one secondary index per name. For every name and
	// value, a key is in indices[name].byValue[value] iff the IndexFunc
	// returned value for the object stored under that key when it was
	// stored. The built-in namespace index is not here: it is spaces.
	indices map[string]*index[T]

	// names are the names of the indices, sorted, so that writes run the
	// IndexFuncs, and report errors and trace events, in a stable order.
	names []string

	// copies is the mutation detector's memory: copies[k] is a deep copy
	// of the object stored under k, taken when it was stored. It is nil
	// when the detector is off, and otherwise has exactly the stored keys.
	copies map[informer.Key]runtime.Object

	// trace and detect are fixed at New and read without mu. detect says
	// whether the mutation detector is on (copies != nil).
	trace  informer.TraceHook
	detect bool
}

// New returns an empty Indexer configured by opts. It fails, naming the
// index, if an IndexFunc in opts.Indexers is nil, or if one is named
// NamespaceIndex: that index is built in.
func New[T informer.Object](opts Options[T]) (*Indexer[T], error) {
	i := &Indexer[T]{
		spaces:  map[string]*space[T]{},
		indices: map[string]*index[T]{},
		trace:   opts.Trace,
		detect:  opts.DetectMutations,
	}
	if opts.DetectMutations {
		i.copies = map[informer.Key]runtime.Object{}
	}
	for name, fn := range opts.Indexers {
		if err := checkIndex(name, fn); err != nil {
			return nil, fmt.Errorf("indexer.New: %w", err)
		}
		i.indices[name] = newIndex(fn)
		i.names = append(i.names, name)
	}
	slices.Sort(i.names)
	return i, nil
}

// checkIndex refuses a nil IndexFunc, and the built-in index's name.
func checkIndex[T informer.Object](name string, fn IndexFunc[T]) error {
	if name == NamespaceIndex {
		return fmt.Errorf("the index %q is built in: every Indexer is laid out by namespace, so ByIndex(NamespaceIndex, ns) needs no IndexFunc", name)
	}
	if fn == nil {
		return fmt.Errorf("the IndexFunc of index %q is nil", name)
	}
	return nil
}

// Get returns the object stored under key, and whether there is one.
// Cost: O(1).
//
// The object is shared with the cache: do not modify it.
func (i *Indexer[T]) Get(key informer.Key) (T, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.getLocked(key)
}

func (i *Indexer[T]) getLocked(key informer.Key) (T, bool) {
	if sp, ok := i.spaces[key.Namespace]; ok {
		return sp.get(key.Name)
	}
	var zero T
	return zero, false
}

// List returns every stored object, in no particular order. Cost: O(n),
// one copy of each namespace's slice.
//
// The slice is new and yours to reorder; the objects in it are shared with
// the cache: do not modify them.
func (i *Indexer[T]) List() []T {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]T, 0, i.count)
	for _, sp := range i.spaces {
		out = append(out, sp.objs...)
	}
	return out
}

// ListKeys returns the key of every stored object, in no particular order,
// in a new slice. Cost: O(n).
func (i *Indexer[T]) ListKeys() []informer.Key {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]informer.Key, 0, i.count)
	for ns, sp := range i.spaces {
		for _, name := range sp.names {
			out = append(out, informer.Key{Namespace: ns, Name: name})
		}
	}
	return out
}

// Len returns the number of stored objects. Cost: O(1).
func (i *Indexer[T]) Len() int {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.count
}

// putLocked stores obj under key; removeLocked removes key's object. The
// caller holds mu exclusively.
func (i *Indexer[T]) putLocked(key informer.Key, obj T) {
	sp := spaceOf(i.spaces, key.Namespace)
	before := sp.len()
	sp.put(key.Name, obj)
	i.count += sp.len() - before
}

func (i *Indexer[T]) removeLocked(key informer.Key) {
	sp, ok := i.spaces[key.Namespace]
	if !ok {
		return
	}
	before := sp.len()
	sp.remove(key.Name)
	i.count -= before - sp.len()
	if sp.len() == 0 {
		delete(i.spaces, key.Namespace)
	}
}
