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
//
// A delete records the writes of its key awaited when it was made (its
// after): the cache applies them first, so until they have arrived the
// object's absence may be a create still on its way, not the delete.
type arrivals[T informer.Object] struct {
	mu sync.Mutex
	// waiting holds, per object key, the writes not yet arrived that are
	// still needed (see settleLocked), in the order recorded. A key is
	// absent when it has none. Guarded by mu.
	waiting map[informer.Key][]*arrival
	// progress is closed, and replaced, each time a write arrives or an
	// object of a key with writes waiting is deleted. Guarded by mu.
	progress chan struct{}
}

// arrival is one write an arrivals waits for: a version written, or a
// delete.
type arrival struct {
	rv  string    // the written resourceVersion; "" for a delete that left no object
	uid types.UID // the written object's UID; "" if not known
	// after, for a delete, is the writes of its key recorded before it;
	// nil once it is no longer waited for. Guarded by arrivals.mu.
	after   []*arrival
	arrived bool // guarded by arrivals.mu
	// dropped says the guard no longer waits for it: seen (by the
	// object's absence), or its key ran stale, and then stale is set too
	// if it wrote a version. Guarded by arrivals.mu.
	dropped, stale bool
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

// expect starts waiting for a write of key at rv; cached is what the
// cache holds now.
func (a *arrivals[T]) expect(key informer.Key, rv string, uid types.UID, cached func() (T, bool)) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waitLocked(key, &arrival{rv: rv, uid: uid}, cached)
}

// expectDelete starts waiting for a delete of key: of the object uid,
// if known, and, if rv is not "", at rv, as cached may hold it already,
// when the object only got a deletionTimestamp. It comes after every
// write of key waited for now, those of other owners and those whose
// owner ran stale included
// (TestANoUIDDeleteAfterACreateThatRanStaleWaitsForTheCreate); a delete
// of an object not known is not one of them, but what it came after is.
// A delete of an object not known, with nothing written before it, has
// nothing to wait for: expectDelete returns nil, and only the object's
// absence can say.
func (a *arrivals[T]) expectDelete(key informer.Key, rv string, uid types.UID, cached func() (T, bool)) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	var before []*arrival
	for _, w := range a.waiting[key] {
		if !w.unknownDelete() {
			before = append(before, w)
		}
	}
	if uid == "" && rv == "" && len(before) == 0 {
		return nil
	}
	return a.waitLocked(key, &arrival{rv: rv, uid: uid, after: before}, cached)
}

// unknownDelete reports whether w is the delete of an object not known
// (no UID, no version): no change of the cache marks it, only absence
// can see it (see Cache.Deleted).
func (w *arrival) unknownDelete() bool { return w.rv == "" && w.uid == "" }

// waitLocked waits for w unless it has arrived: the cache holds the
// object at w's version already (it applied it before the handler could
// be told to look). The one case it misses: the cache applied the
// version and moved on, and the handler was told of both, before
// waitLocked. Then w never arrives, and the guard holds its key for
// MaxHold: late, never early. The caller holds mu.
func (a *arrivals[T]) waitLocked(key informer.Key, w *arrival, cached func() (T, bool)) *arrival {
	if obj, ok := cached(); ok && w.rv != "" && w.shows(obj) {
		w.arrived, w.after = true, nil
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

// afterArrived reports whether every write w came after has arrived:
// only then can the object's absence be w's delete.
func (a *arrivals[T]) afterArrived(w *arrival) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, before := range w.after {
		if !before.arrived {
			return false
		}
	}
	return true
}

// forget tells arrivals that the guard dropped w's record: seen, or, if
// stale, because its key ran stale. See settleLocked for how long w is
// still waited for.
func (a *arrivals[T]) forget(key informer.Key, w *arrival, stale bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.dropped, w.stale = true, stale && w.rv != "" && !w.arrived
	a.settleLocked(key)
}

// Progress returns a channel closed the next time a write arrives, or
// an object of a key with writes waiting is deleted.
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
// both, in that order), and wakes the keys once, when both are marked.
// A relist that finds an object deleted and made again comes from the
// informer as a delete of the old UID and an add of the new
// (TestARelistThatReplacesAnObjectLetsTheDeletesAfterItArrive); an
// update between two UIDs, should one come, is taken the same way.
func (a *arrivals[T]) OnAdd(obj T, _ bool) { a.changed(change[T]{obj: obj}) }

func (a *arrivals[T]) OnUpdate(old, obj T) {
	replaced := old.GetUID() != "" && obj.GetUID() != "" && old.GetUID() != obj.GetUID()
	a.changed(change[T]{obj: old, deleted: replaced}, change[T]{obj: obj})
}

func (a *arrivals[T]) OnDelete(obj T, _ bool) { a.changed(change[T]{obj: obj, deleted: true}) }

// change is one state of an object the handler is told of, in order.
type change[T informer.Object] struct {
	obj     T
	deleted bool
}

// changed marks the writes of each change's key that it shows arrived:
// the written object at the written version, or, deleted, the written
// object gone, which follows every write to it. A change that marks a
// write, or deletes an object of a key with writes waiting, closes
// progress, once, after every change is marked: a delete whose UID is
// not known is seen by its object's absence, which no mark says
// (TestADeleteSeenByAReplacingRelistWakesItsKey). Other changes wake
// nothing, so that a key is not asked again for nothing.
func (a *arrivals[T]) changed(changes ...change[T]) {
	a.mu.Lock()
	defer a.mu.Unlock()
	woken := false
	for _, c := range changes {
		key, uid := informer.KeyFor(c.obj), c.obj.GetUID()
		ws, ok := a.waiting[key]
		if !ok {
			continue // the common case: nothing written
		}
		for _, w := range ws {
			if w.shows(c.obj) || c.deleted && w.uid != "" && w.uid == uid {
				w.arrived = true
				woken = true
			}
		}
		woken = woken || c.deleted
		a.settleLocked(key)
	}
	if woken {
		close(a.progress)
		a.progress = make(chan struct{})
	}
}

// settleLocked stops waiting for key's writes that are no longer needed.
// A write the guard waits for is needed until it arrives; so is every
// write it came after, directly or through another delete's after, so
// that the object's absence can be judged in the cache's order although
// the guard dropped that write first, seen by its object's absence or
// run stale
// (TestADeleteSeenByAbsenceBeforeTheHandlerStillLetsALaterDeleteArrive,
// TestACreateDroppedStaleStillLetsADeleteAfterItArrive). A version
// written by a key that ran stale is needed until it arrives, even if
// nothing needs it yet, so that a delete recorded later comes after it:
// until the cache shows it, or a change after it of its object, or the
// object's delete. A write no longer needed lets go of its after, so
// that memory follows the writes in flight, not every write made to a
// churning key (TestNoUIDDeletesOfAChurningKeyKeepOnlyTheWritesInFlight).
// The caller holds mu.
func (a *arrivals[T]) settleLocked(key informer.Key) {
	ws := a.waiting[key]
	needed := map[*arrival]bool{}
	var need func(w *arrival)
	need = func(w *arrival) {
		if needed[w] || w.arrived {
			return
		}
		needed[w] = true
		for _, before := range w.after {
			need(before)
		}
	}
	for _, w := range ws {
		if !w.dropped || w.stale {
			need(w)
		}
	}
	kept := slices.DeleteFunc(ws, func(w *arrival) bool {
		if needed[w] {
			return false
		}
		w.after = nil
		return true
	})
	if len(kept) == 0 {
		delete(a.waiting, key)
	} else {
		a.waiting[key] = kept
	}
}
