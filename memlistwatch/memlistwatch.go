package memlistwatch

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// ListerWatcher is an in-memory collection of objects of one type that
// answers LIST and WATCH the way kube-apiserver does, with a resourceVersion
// counter in place of etcd's revision. It implements the reflector's
// ListerWatcher[T] (by shape: this package does not import reflector).
//
// Tests and examples write to it with Create, Update and Delete, and inject
// faults with DropWatches, Disconnect, Compact, Bookmark and
// RefuseStreamingLists. Every method is safe to call from any goroutine.
type ListerWatcher[T informer.Object] struct {
	mu sync.Mutex
	// rv is the resourceVersion of the latest write. Every Create, Update
	// and Delete takes rv+1, so the collection's resourceVersions are 2, 3,
	// 4, ... and a LIST of an untouched collection answers "1".
	rv int64
	// current is the latest state of every object: private deep copies,
	// never modified in place (a write replaces the map entry), so they can
	// be shared with base and history.
	current map[informer.Key]T
	// base is the state at compactedRV, and history holds every write after
	// it in resourceVersion order. Invariant: base with history applied is
	// current. Together they give the state at any resourceVersion from
	// compactedRV on (stateAt); older states are gone, as after an etcd
	// compaction.
	base        map[informer.Key]T
	compactedRV int64
	history     []change[T]
	// watchers are the open watches; a write queues its event on each.
	watchers map[*watcher]struct{}
	// reconnected is non-nil while Disconnect is in force; Reconnect closes it.
	reconnected     chan struct{}
	refuseStreaming bool
	stats           Stats
}

// change is one write: its event type, the object as the write left it
// (for a delete, the last state), and the resourceVersion it took.
type change[T informer.Object] struct {
	typ watch.EventType
	obj T
	rv  int64
}

// Stats counts the requests a ListerWatcher has served.
type Stats struct {
	Lists       int // LIST requests, one per page
	Watches     int // WATCH requests, including streaming lists
	OpenWatches int // watches open now
}

// New returns an empty collection at resourceVersion "1".
func New[T informer.Object]() *ListerWatcher[T] {
	return &ListerWatcher[T]{
		rv:          1,
		compactedRV: 1,
		current:     map[informer.Key]T{},
		base:        map[informer.Key]T{},
		watchers:    map[*watcher]struct{}{},
	}
}

// resource names the collection in error messages, as an API error would.
var resource = schema.GroupResource{Resource: "objects"}

// Create stores a copy of obj at the next resourceVersion and returns that
// copy, or an AlreadyExists error if its key is taken. Unlike
// kube-apiserver it sets no UID: the copy keeps obj's (see the package
// doc).
func (lw *ListerWatcher[T]) Create(obj T) (T, error) {
	return lw.write(watch.Added, obj)
}

// Update replaces the stored object with a copy of obj at the next
// resourceVersion and returns that copy, or a NotFound error. Like a PUT
// without a resourceVersion precondition, it always wins.
func (lw *ListerWatcher[T]) Update(obj T) (T, error) {
	return lw.write(watch.Modified, obj)
}

// Delete removes the object with key at the next resourceVersion, or
// returns a NotFound error. Watchers see DELETED with the object's last
// state stamped with that resourceVersion, as kube-apiserver sends it.
func (lw *ListerWatcher[T]) Delete(key informer.Key) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	old, ok := lw.current[key]
	if !ok {
		return apierrors.NewNotFound(resource, key.String())
	}
	_, err := lw.commitLocked(watch.Deleted, key, old)
	return err
}

func (lw *ListerWatcher[T]) write(typ watch.EventType, obj T) (T, error) {
	var zero T
	if informer.IsNil(obj) {
		return zero, fmt.Errorf("memlistwatch: %s of a nil object", typ)
	}
	key, err := informer.KeyOf(obj)
	if err != nil {
		return zero, fmt.Errorf("memlistwatch: %w", err)
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, exists := lw.current[key]
	switch {
	case typ == watch.Added && exists:
		return zero, apierrors.NewAlreadyExists(resource, key.String())
	case typ == watch.Modified && !exists:
		return zero, apierrors.NewNotFound(resource, key.String())
	}
	stored, err := lw.commitLocked(typ, key, obj)
	if err != nil {
		return zero, err
	}
	return deepCopy(stored)
}

// commitLocked applies one write at the next resourceVersion: it updates
// current, appends to history and queues the event on every watcher.
// It returns the stored copy.
func (lw *ListerWatcher[T]) commitLocked(typ watch.EventType, key informer.Key, obj T) (T, error) {
	stored, err := deepCopy(obj)
	if err != nil {
		return stored, err
	}
	lw.rv++
	stored.SetResourceVersion(strconv.FormatInt(lw.rv, 10))
	if typ == watch.Deleted {
		delete(lw.current, key)
	} else {
		lw.current[key] = stored
	}
	c := change[T]{typ: typ, obj: stored, rv: lw.rv}
	lw.history = append(lw.history, c)
	for w := range lw.watchers {
		w.push(event(c))
	}
	return stored, nil
}

// ResourceVersion returns the resourceVersion of the latest write ("1" for
// a collection never written), the one a LIST answers with.
func (lw *ListerWatcher[T]) ResourceVersion() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return strconv.FormatInt(lw.rv, 10)
}

// Stats returns the number of requests served so far.
func (lw *ListerWatcher[T]) Stats() Stats {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	stats := lw.stats
	stats.OpenWatches = len(lw.watchers)
	return stats
}

// AdvanceResourceVersion moves the resourceVersion on by n without
// changing this collection, as writes to other collections do: a real
// resourceVersion is etcd's revision, one counter for every object of every
// type. Watches see nothing of it until a Bookmark. It returns the new
// resourceVersion.
func (lw *ListerWatcher[T]) AdvanceResourceVersion(n int) string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rv += int64(max(n, 0))
	return strconv.FormatInt(lw.rv, 10)
}

// RefuseStreamingLists makes every later WATCH with sendInitialEvents=true
// fail with 422 Invalid, as a server without the WatchList feature does, so
// a client must fall back to LIST.
func (lw *ListerWatcher[T]) RefuseStreamingLists() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.refuseStreaming = true
}

// deepCopy returns a deep copy of obj as a T. It fails only for a T whose
// DeepCopyObject returns another type, which no generated type does.
func deepCopy[T informer.Object](obj T) (T, error) {
	c, ok := obj.DeepCopyObject().(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("memlistwatch: DeepCopyObject of %T returned %T", obj, obj.DeepCopyObject())
	}
	return c, nil
}

// newObject returns a new, empty T: for T = *corev1.Pod, &corev1.Pod{}.
// (new(T) would be a **corev1.Pod.) Bookmarks carry one with only a
// resourceVersion, as the API server's do.
func newObject[T informer.Object]() T {
	var zero T
	typ := reflect.TypeOf(&zero).Elem() // T itself, even when T is an interface
	if typ.Kind() != reflect.Pointer {
		return zero
	}
	return reflect.New(typ.Elem()).Interface().(T)
}
