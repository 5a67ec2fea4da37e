package readyourwrites

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	// progress is closed, and replaced, each time the handler is told of
	// a change of a key with writes waiting. Guarded by mu.
	progress chan struct{}
	// clock and giveUp judge when a write is given up on (see done).
	clock  informer.Clock
	giveUp time.Duration
	// kept counts the writes dropped stale and kept waiting (see
	// settleLocked); swept is kept after the last sweep of every key.
	// Guarded by mu.
	kept, swept int
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
	// object's absence, or its key ran stale: then stale is set too).
	// Guarded by arrivals.mu.
	dropped, stale bool
	// recorded is when it was recorded, from which it is given up on.
	recorded time.Time
}

// handlerSeq numbers arrivals handlers, so that each has its own name on
// its informer.
var handlerSeq atomic.Int64

// newArrivals registers an arrivals on inf, named after the guard, and
// returns its registration, for the guard's Close to remove. A write is
// given up on 2*maxHold after it was recorded, on clock.
func newArrivals[T informer.Object](guard string, inf *si.Informer[T], clock informer.Clock, maxHold time.Duration) (*arrivals[T], *si.Registration, error) {
	a := &arrivals[T]{waiting: map[informer.Key][]*arrival{}, progress: make(chan struct{}), clock: clock, giveUp: 2 * maxHold}
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
	return a.waitLocked(key, &arrival{rv: rv, uid: uid, recorded: a.clock.Now()}, cached)
}

// expectDelete starts waiting for a delete of key: of the object uid,
// if known, and, if rv is not "", at rv, as cached may hold it already,
// when the object only got a deletionTimestamp. It comes after every
// write of key waited for now and not given up on, which the cache
// applies first: those of other owners too, and those whose owner ran
// stale (TestANoUIDDeleteAfterACreateThatRanStaleWaitsForTheCreate). A
// delete of an object not known, with nothing written before it, has
// nothing to wait for: expectDelete returns nil, and only the object's
// absence can say.
func (a *arrivals[T]) expectDelete(key informer.Key, rv string, uid types.UID, cached func() (T, bool)) *arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now()
	var before []*arrival
	for _, w := range a.waiting[key] {
		if !a.doneLocked(w, now) {
			before = append(before, w)
		}
	}
	if uid == "" && rv == "" && len(before) == 0 {
		return nil
	}
	return a.waitLocked(key, &arrival{rv: rv, uid: uid, after: before, recorded: now}, cached)
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

// afterArrived reports whether every write w came after has arrived:
// only then can the object's absence be w's delete. (One given up on
// lets a delete event mark w, never its absence: a create that reaches
// the cache later would bring the object back.)
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

// allDoneLocked reports whether every one of ws is done (see doneLocked).
// The caller holds mu.
func (a *arrivals[T]) allDoneLocked(ws []*arrival, now time.Time) bool {
	for _, w := range ws {
		if !a.doneLocked(w, now) {
			return false
		}
	}
	return true
}

// doneLocked reports whether the deletes after w need no longer wait for
// it: it has arrived, or it is given up on, 2*MaxHold after it was
// recorded. A write the handler is never told of at its version (the
// cache applied it and moved on before Wrote looked, or a relist jumped
// past it) would otherwise hold every later delete of its key for
// MaxHold, and keep them all in memory
// (TestASkippedCreateHoldsLaterDeletesOfItsKeyForABoundedTime). By then
// its own key has run stale, or was not asked about. The caller holds mu.
func (a *arrivals[T]) doneLocked(w *arrival, now time.Time) bool {
	return w.arrived || now.Sub(w.recorded) >= a.giveUp
}

// forget tells arrivals that the guard dropped w's record: seen, or,
// if stale, because its key ran stale. See settleLocked for how long w
// is still waited for.
func (a *arrivals[T]) forget(key informer.Key, w *arrival, stale bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.dropped, w.stale = true, stale && !w.arrived
	if w.stale {
		a.kept++
	}
	a.settleLocked(key, a.clock.Now())
	if w.stale && a.kept >= 2*max(a.swept, 32) {
		// A key no change or write comes back to keeps its writes dropped
		// stale until a sweep finds them given up on.
		for k := range a.waiting {
			a.settleLocked(k, a.clock.Now())
		}
		a.swept = a.kept
	}
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
// both, in that order). An update to an object of another UID (a relist
// found the object deleted and made again) deletes the old object
// (TestARelistThatReplacesAnObjectLetsTheDeletesAfterItArrive).
func (a *arrivals[T]) OnAdd(obj T, _ bool) { a.changed(obj, false) }

func (a *arrivals[T]) OnUpdate(old, obj T) {
	replaced := old.GetUID() != "" && obj.GetUID() != "" && old.GetUID() != obj.GetUID()
	a.changed(old, replaced)
	a.changed(obj, false)
}

func (a *arrivals[T]) OnDelete(obj T, _ bool) { a.changed(obj, true) }

// changed marks the writes of obj's key that obj shows arrived: obj is
// the written object at the written version, or, deleted, the written
// object gone, which follows every write to it. A delete of an object
// not known (no UID, no version) arrives with the first delete of its
// key after the writes it came after (marked in this same pass if this
// delete is theirs: the waiting writes are in the order recorded). Any
// change of a key with writes waiting closes progress: a delete may now
// be seen by its object's absence
// (TestADeleteSeenByAReplacingRelistWakesItsKey).
func (a *arrivals[T]) changed(obj T, deleted bool) {
	key, uid := informer.KeyFor(obj), obj.GetUID()
	a.mu.Lock()
	defer a.mu.Unlock()
	ws, ok := a.waiting[key]
	if !ok {
		return // the common case: nothing written
	}
	now := a.clock.Now()
	for _, w := range ws {
		if w.shows(obj) || deleted && (w.uid != "" && w.uid == uid || w.uid == "" && w.rv == "" && a.allDoneLocked(w.after, now)) {
			w.arrived = true
		}
	}
	a.settleLocked(key, now)
	close(a.progress)
	a.progress = make(chan struct{})
}

// settleLocked stops waiting for key's writes that are no longer needed.
// A write the guard waits for is needed until it arrives; so is every
// write it came after, directly or through another delete's after, until
// that one is done (see doneLocked), so that the delete can arrive in the
// cache's order although the guard dropped the write first, seen by its
// object's absence or run stale
// (TestADeleteSeenByAbsenceBeforeTheHandlerStillLetsALaterDeleteArrive,
// TestACreateDroppedStaleStillLetsADeleteAfterItArrive). A write dropped
// stale is kept until it is done even if nothing needs it yet, so that a
// delete recorded later comes after it. A write no longer waited for
// lets go of its after, so that memory follows the writes in flight, not
// every write made to a churning key
// (TestNoUIDDeletesOfAChurningKeyKeepOnlyTheWritesInFlight). The caller
// holds mu.
func (a *arrivals[T]) settleLocked(key informer.Key, now time.Time) {
	ws := a.waiting[key]
	needed := map[*arrival]bool{}
	var need func(w *arrival)
	need = func(w *arrival) {
		if needed[w] || w.arrived {
			return
		}
		needed[w] = true
		for _, before := range w.after {
			if !a.doneLocked(before, now) {
				need(before)
			}
		}
	}
	for _, w := range ws {
		if !w.dropped || w.stale && !a.doneLocked(w, now) {
			need(w)
		}
	}
	kept := slices.DeleteFunc(ws, func(w *arrival) bool {
		if needed[w] {
			return false
		}
		if w.stale {
			a.kept--
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
