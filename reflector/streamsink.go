package reflector

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// streamSink is where a streaming list's initial events go: into a
// PartStore in parts of streamPartSize objects as they arrive, so that,
// as with a LIST read in parts, the new list never sits whole beside the
// old cache; or, for any other Store, gathered one object per key for
// one Replace at the closing bookmark. Unlike a LIST (see holdBack), a
// stream is not held back by a slow consumer: the API server's watch
// cache ends a watcher that does not keep up with the changes, and the
// list would start over.
type streamSink[T informer.Object] struct {
	store  Store[T]
	parts  PartStore[T] // nil: gathered for Replace
	batch  []T          // the objects not yet handed to parts
	handed int          // the objects handed to parts so far
	// gathered is the list for Replace, when the store is no PartStore.
	gathered *gathered[T]
}

// streamPartSize is how many objects of a streaming list go to the
// PartStore at once: enough that a part costs little to hand over, few
// enough that they weigh little.
const streamPartSize = 256

// errDeletedAmongInitialEvents is a DELETED event before the initial
// events end, into a PartStore. The protocol sends only the state at one
// resourceVersion, as ADDED events; a deletion cannot be taken back from
// the parts already handed over, so the reflector lists instead.
var errDeletedAmongInitialEvents = errors.New("a DELETED event among a streaming list's initial events")

// newStreamSink begins a replacement, in a PartStore.
func (r *Reflector[T]) newStreamSink() (*streamSink[T], error) {
	parts, _ := r.store.(PartStore[T])
	s := &streamSink[T]{store: r.store, parts: parts}
	if parts == nil {
		s.gathered = newGathered[T]()
		return s, nil
	}
	return s, parts.BeginReplace()
}

// add takes one initial event. bad is an event that is not a valid T
// (to be reported and skipped) or errDeletedAmongInitialEvents; refused
// is the PartStore's refusal of a part.
func (s *streamSink[T]) add(ev watch.Event) (bad, refused error) {
	if s.parts == nil {
		return s.gathered.add(ev), nil
	}
	obj, _, err := initialObject[T](ev)
	if err != nil {
		return err, nil
	}
	if ev.Type == watch.Deleted {
		return errDeletedAmongInitialEvents, nil
	}
	s.batch = append(s.batch, obj)
	if len(s.batch) >= streamPartSize {
		return nil, s.flush()
	}
	return nil, nil
}

// flush hands the batch to the PartStore, which keeps the slice.
func (s *streamSink[T]) flush() error {
	if len(s.batch) == 0 {
		return nil
	}
	if err := s.parts.ReplacePart(s.batch); err != nil {
		return err
	}
	s.handed += len(s.batch)
	s.batch = nil
	return nil
}

// finish ends the list at resourceVersion rv, and says how many objects
// it held.
func (s *streamSink[T]) finish(rv string) (int, error) {
	if s.parts == nil {
		items := s.gathered.items()
		return len(items), s.store.Replace(items, rv)
	}
	if err := s.flush(); err != nil {
		return 0, err
	}
	return s.handed, s.parts.FinishReplace(rv)
}

// initialObject checks that an initial event carries a valid T, and
// returns it and its key.
func initialObject[T informer.Object](ev watch.Event) (T, informer.Key, error) {
	obj, ok := ev.Object.(T)
	if !ok || informer.IsNil(obj) {
		var want T
		return obj, informer.Key{}, fmt.Errorf("%w: %s event with %T, want %T", ErrUnexpectedObject, ev.Type, ev.Object, want)
	}
	key, err := informer.KeyOf(obj)
	if err != nil {
		return obj, informer.Key{}, fmt.Errorf("%w: %v", ErrUnexpectedObject, err)
	}
	return obj, key, nil
}

// gathered holds the objects of a streaming list, in arrival order, one per
// key (a later event for a key replaces the earlier).
type gathered[T informer.Object] struct {
	order  []informer.Key        // every key ever added, once, in arrival order
	placed map[informer.Key]bool // the keys in order
	objs   map[informer.Key]T    // the current object of each key not deleted
}

func newGathered[T informer.Object]() *gathered[T] {
	return &gathered[T]{placed: map[informer.Key]bool{}, objs: map[informer.Key]T{}}
}

// add applies one initial event: ADDED or MODIFIED keeps the object,
// DELETED drops it. Anything not a valid T is an error.
func (g *gathered[T]) add(ev watch.Event) error {
	obj, key, err := initialObject[T](ev)
	if err != nil {
		return err
	}
	if ev.Type == watch.Deleted {
		delete(g.objs, key)
		return nil
	}
	if !g.placed[key] {
		g.placed[key] = true
		g.order = append(g.order, key)
	}
	g.objs[key] = obj
	return nil
}

// items returns the gathered objects in arrival order.
func (g *gathered[T]) items() []T {
	out := make([]T, 0, len(g.objs))
	for _, key := range g.order {
		if obj, ok := g.objs[key]; ok {
			out = append(out, obj)
		}
	}
	return out
}
