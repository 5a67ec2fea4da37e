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
	rv  string    // the written resourceVersion
	uid types.UID // the written object's UID; "" if not known
	// after, for a delete, is the writes of its key recorded before it,
	// which the cache applies first; nil once it has arrived or is no
	// longer waited for. Guarded by arrivals.mu.
	after   []*arrival
	arrived bool // guarded by arrivals.mu
	// dropped says the guard no longer waits for it (seen by the
	// object's absence, or its key ran stale). It is still waited for
	// while an arrival the guard waits for has it in its after, so that
	// that one can arrive in the cache's order. Guarded by arrivals.mu.
	dropped bool
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
// write of key waited for now, which the cache applies first. A delete
// of an object not known, with nothing written before it, has nothing
// to wait for: expectDelete returns nil, and only the object's absence
// can say.
func (a *arrivals[T]) expectDelete(key informer.Key, rv string, uid types.UID, cached func() (T, bool)) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	before := slices.Clone(a.waiting[key])
	if uid == "" && rv == "" && len(before) == 0 {
		return nil
	}
	return a.waitLocked(key, &arrival{rv: rv, uid: uid, after: before}, cached)
}

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

// afterArrived reports whether every write w came after has arrived.
func (a *arrivals[T]) afterArrived(w *arrival) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return allArrivedLocked(w.after)
}

// allArrivedLocked reports whether every one of ws has arrived. The
// caller holds arrivals.mu.
func allArrivedLocked(ws []*arrival) bool {
	for _, w := range ws {
		if !w.arrived {
			return false
		}
	}
	return true
}

// forget tells arrivals that the guard dropped w's record, seen or not.
// w is still waited for while a write the guard waits for came after it
// (TestADeleteSeenByAbsenceBeforeTheHandlerStillLetsALaterDeleteArrive,
// TestACreateDroppedStaleStillLetsADeleteAfterItArrive).
func (a *arrivals[T]) forget(key informer.Key, w *arrival) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.dropped = true
	a.settleLocked(key)
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
// object gone, which follows every write to it. A delete of an object
// not known (no UID, no version) arrives with the first delete of its
// key after the writes it came after (marked in this same pass if this
// delete is theirs: the waiting writes are in the order recorded).
func (a *arrivals[T]) changed(obj T, deleted bool) {
	key, uid := informer.KeyFor(obj), obj.GetUID()
	a.mu.Lock()
	defer a.mu.Unlock()
	ws, ok := a.waiting[key]
	if !ok {
		return // the common case: nothing written
	}
	marked := false
	for _, w := range ws {
		if w.shows(obj) || deleted && (w.uid != "" && w.uid == uid || w.uid == "" && w.rv == "" && allArrivedLocked(w.after)) {
			w.arrived = true
			marked = true
		}
	}
	if marked {
		a.settleLocked(key)
		close(a.progress)
		a.progress = make(chan struct{})
	}
}

// settleLocked stops waiting for key's writes that have arrived, and for
// those the guard dropped that no write it waits for came after,
// directly or through another delete's after. A write no longer waited
// for lets go of its after, so that memory follows the writes in flight,
// not every write made to a churning key
// (TestNoUIDDeletesOfAChurningKeyKeepOnlyTheWritesInFlight). The caller
// holds mu.
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
		if !w.dropped {
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
