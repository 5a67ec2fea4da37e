package readyourwrites

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// arrivals tells, for a guard with Options.OpaqueResourceVersions, which
// written versions have reached one informer's cache. With
// resourceVersions that cannot be ordered, "the cache holds 6" does not
// say whether the write at 5 came before; only the order in which the
// cache applied changes does. So arrivals is a handler of the informer:
// it is told of every change in that order, and marks a write arrived
// when the written object (the same UID, where known) is in a change at
// exactly the written version, as the new state or the old one it moves
// on from, or when that object is deleted.
type arrivals[T informer.Object] struct {
	mu sync.Mutex
	// waiting holds, per object key, the writes not yet arrived. A key is
	// absent when it has none. Guarded by mu.
	waiting map[informer.Key][]*arrival
	// progress is closed, and replaced, each time a write arrives.
	// Guarded by mu.
	progress chan struct{}
}

// arrival is one written version an arrivals waits for.
type arrival struct {
	rv      string     // the written resourceVersion
	uid     types.UID  // the written object's UID; "" if not known
	after   []*arrival // for a delete of an object not known (no rv, no UID): the writes it came after
	arrived bool       // guarded by arrivals.mu
}

// handlerSeq numbers arrivals handlers, so that each has its own name on
// its informer.
var handlerSeq atomic.Int64

// newArrivals registers an arrivals on inf, named after the guard, and
// returns its registration, for the guard's Close to remove.
func newArrivals[T informer.Object](guard string, inf *si.Informer[T]) (*arrivals[T], *si.Registration, error) {
	a := &arrivals[T]{waiting: map[informer.Key][]*arrival{}, progress: make(chan struct{})}
	name := fmt.Sprintf("readyourwrites %s %d", guard, handlerSeq.Add(1))
	reg, err := inf.AddEventHandler(a, si.HandlerOptions{Name: name})
	if err != nil {
		return nil, nil, err
	}
	return a, reg, nil
}

// expect starts waiting for key at rv; cached is what the cache holds
// now. If that is already the object at rv, the write has arrived (the cache applied it
// before the handler could be told to look). The one case it misses: the
// cache applied rv and moved on, and the handler was told of both, before
// expect. Then the write never arrives, and the guard holds its key for
// MaxHold: late, never early.
func (a *arrivals[T]) expect(key informer.Key, rv string, uid types.UID, cached func() (T, bool)) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := &arrival{rv: rv, uid: uid}
	if obj, ok := cached(); ok && w.shows(obj) {
		w.arrived = true
		return w
	}
	a.waiting[key] = append(a.waiting[key], w)
	return w
}

// hasArrived reports whether w has arrived.
func (a *arrivals[T]) hasArrived(w *arrival) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return w.arrived
}

// waitingFor is key's writes not arrived yet.
func (a *arrivals[T]) waitingFor(key informer.Key) []*arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.waiting[key])
}

// expectDeleteAfter starts waiting for a delete of key, of an object
// not known, that comes after every one of before has arrived: a delete
// of the key the handler is told of before that is an earlier object's.
func (a *arrivals[T]) expectDeleteAfter(key informer.Key, before []*arrival) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := &arrival{after: before}
	a.waiting[key] = append(a.waiting[key], w)
	return w
}

// allArrived reports whether every one of ws has arrived.
func (a *arrivals[T]) allArrived(ws []*arrival) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return allArrivedLocked(ws)
}

// allArrivedLocked is allArrived with arrivals.mu held.
func allArrivedLocked(ws []*arrival) bool {
	for _, w := range ws {
		if !w.arrived {
			return false
		}
	}
	return true
}

// forget stops waiting for w: the guard dropped its record unseen.
func (a *arrivals[T]) forget(key informer.Key, w *arrival) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.keepLocked(key, func(x *arrival) bool { return x != w })
}

// Progress returns a channel closed the next time a write arrives.
func (a *arrivals[T]) Progress() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.progress
}

// shows reports whether obj is the written object at the written
// version: the same resourceVersion and, where both are known, the same
// UID (an object deleted and made again may count from 1 again).
func (w *arrival) shows(obj informer.Object) bool {
	return obj.GetResourceVersion() == w.rv && (w.uid == "" || obj.GetUID() == "" || obj.GetUID() == w.uid)
}

// OnAdd, OnUpdate and OnDelete make arrivals a sharedinformer.Handler:
// an update shows its old state as well as its new one (the cache held
// both, in that order).
func (a *arrivals[T]) OnAdd(obj T, _ bool) { a.changed(obj, false) }

func (a *arrivals[T]) OnUpdate(old, obj T) { a.changed(old, false); a.changed(obj, false) }

func (a *arrivals[T]) OnDelete(obj T, _ bool) { a.changed(obj, true) }

// changed marks the writes of obj's key that obj shows arrived: obj is
// the written object at the written version, or, deleted, the written
// object gone, which follows every write to it.
func (a *arrivals[T]) changed(obj T, deleted bool) {
	key, uid := informer.KeyFor(obj), obj.GetUID()
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.waiting[key]; !ok {
		return // the common case: nothing written
	}
	n := len(a.waiting[key])
	a.keepLocked(key, func(w *arrival) bool {
		// A delete of an object not known (no UID, no version) arrives
		// with the first delete of its key after the writes it came
		// after (marked in this same pass if this delete is theirs).
		w.arrived = w.shows(obj) || deleted && (w.uid != "" && w.uid == uid || w.uid == "" && w.rv == "" && allArrivedLocked(w.after))
		return !w.arrived
	})
	if len(a.waiting[key]) < n {
		close(a.progress)
		a.progress = make(chan struct{})
	}
}

// keepLocked keeps key's waiting writes for which keep is true. The
// caller holds mu.
func (a *arrivals[T]) keepLocked(key informer.Key, keep func(*arrival) bool) {
	kept := slices.DeleteFunc(a.waiting[key], func(w *arrival) bool { return !keep(w) })
	if len(kept) == 0 {
		delete(a.waiting, key)
	} else {
		a.waiting[key] = kept
	}
}
