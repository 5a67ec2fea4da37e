package indexer

import (
	"slices"

	"github.com/listwatch/informer"
)

// space holds the objects of one namespace ("" for cluster-scoped ones)
// as a dense slice, with the position of each name in it. The Indexer is
// laid out by namespace because that is the question asked most, by every
// lister's Namespace(ns).List: answering it is one copy of a slice, a
// memmove, however many objects there are elsewhere. That copy is all a
// reader does under the read lock (but for an allocation when writers
// grew the namespace meanwhile: see Indexer.Namespace), so a writer never
// waits behind a walk (kubernetes#130767: in client-go a writer waits for
// every reader walking its index and looking each key up).
//
// space has no lock of its own: the Indexer's mu guards it.
type space[T informer.Object] struct {
	// objs are the namespace's objects, in no particular order, and
	// names[n] is the name objs[n] was stored under. The names are kept,
	// not read back from the objects, so that a reader who changed a
	// cached object's name in place (pitfall 2) cannot corrupt the layout.
	objs  []T
	names []string
	// pos[name] is the index in objs of the object of that name.
	// Invariant: pos[names[n]] == n for every n, and pos has exactly
	// len(objs) entries.
	pos map[string]int
}

func newSpace[T informer.Object]() *space[T] {
	return &space[T]{pos: map[string]int{}}
}

// spaceOf returns spaces[ns], making it first if there is none.
func spaceOf[T informer.Object](spaces map[string]*space[T], ns string) *space[T] {
	sp, ok := spaces[ns]
	if !ok {
		sp = newSpace[T]()
		spaces[ns] = sp
	}
	return sp
}

// get returns the object called name.
func (s *space[T]) get(name string) (T, bool) {
	n, ok := s.pos[name]
	if !ok {
		var zero T
		return zero, false
	}
	return s.objs[n], true
}

// put stores obj under name, in place of any object of that name.
func (s *space[T]) put(name string, obj T) {
	if n, ok := s.pos[name]; ok {
		s.objs[n] = obj
		return
	}
	s.pos[name] = len(s.objs)
	s.objs = append(s.objs, obj)
	s.names = append(s.names, name)
}

// remove removes the object called name, if any: the last object moves
// into its slot, so objs stays dense.
func (s *space[T]) remove(name string) {
	n, ok := s.pos[name]
	if !ok {
		return
	}
	last := len(s.objs) - 1
	if n != last {
		s.objs[n], s.names[n] = s.objs[last], s.names[last]
		s.pos[s.names[n]] = n
	}
	var zero T
	s.objs[last], s.names[last] = zero, "" // the slot may not keep the removed object alive
	s.objs, s.names = s.objs[:last], s.names[:last]
	delete(s.pos, name)
	if cap(s.objs) > 64 && len(s.objs) < cap(s.objs)/4 { // give memory back after mass deletion
		s.objs, s.names = slices.Clip(slices.Clone(s.objs)), slices.Clip(slices.Clone(s.names))
	}
}

// len is the number of objects in the namespace.
func (s *space[T]) len() int { return len(s.objs) }
