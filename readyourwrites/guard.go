package readyourwrites

import (
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/metrics"
)

// Options configure a Guard. The zero value is valid.
type Options struct {
	// MaxHold bounds how long a key is held for writes its cache has not
	// seen. Past it the reconcile runs anyway, on a cache that may be
	// stale, and the guard counts it (a metric, a trace event): a cache
	// that lags by seconds has a broken watch, and a controller that
	// stops reconciling is worse than one that reconciles late state.
	// Default: 5s.
	MaxHold time.Duration
	// Name labels the guard's metrics, such as the controller's name.
	// Trace events carry no name: the Trace hook is the guard's own, so
	// the caller knows whose events it gets
	// (TestAGuardsTraceEventsCarryNoNameTheHookIsTheGuardsOwn).
	// Default: "guard".
	Name string
	// Metrics, if set, receives the guard's series (see the package
	// doc). Default: none.
	Metrics *metrics.Registry
	// Trace receives an event when a key is held, released and run
	// stale (StageGuard). It is called with the guard's lock held, so it
	// must return quickly and must not call the guard. Default: nil, no
	// tracing, no cost.
	Trace informer.TraceHook
	// Clock times holds. Default: informer.RealClock.
	Clock informer.Clock
	// OpaqueResourceVersions compares resourceVersions for equality only.
	// By default the guard takes integer resourceVersions as KEP-5504
	// promises them for kube-apiserver since 1.35: within one resource,
	// a larger number is a later state, so a cache that has applied 8
	// holds every write up to 8, of any object. A server that breaks the
	// promise (an aggregated API server that counts per object, say)
	// makes the default release keys early. With this option, a write is
	// seen once its cache holds the written object at exactly the
	// written resourceVersion, or, since the write was recorded, has held
	// it or applied a change of that object after it (an update from it,
	// a delete); another object's version counts for nothing. Track then
	// registers a handler on each informer, which sees the cache's
	// changes in order. A version the cache skips (a relist that jumps
	// past it) is never seen, nor is one it held and moved past before
	// the write was recorded (an answer recorded late, through Wrote:
	// TestWithOpaqueResourceVersionsAWriteTheCacheMovedPastBeforeItWasRecordedHoldsItsKeyForMaxHold):
	// the key is then held for MaxHold, late but never early.
	// Default: false.
	OpaqueResourceVersions bool
}

// Guard remembers, for each key a controller reconciles, the writes the
// reconciles of that key made and its caches have not yet shown, and
// holds the key back until they have. It is a workqueue.Gate: pass it as
// RunOptions.Gate. Record writes through a [Cache] made by [Track].
//
// A Guard is safe for concurrent use.
type Guard struct {
	opts    Options
	metrics *guardMetrics

	mu sync.Mutex
	// pending holds, per owner key, its writes not yet seen to be in a
	// cache. A key is absent when it has none.
	pending map[informer.Key][]write
	// heldSince is when Hold first held a key, since it last passed.
	heldSince map[informer.Key]time.Time
	// records counts the writes in pending; swept is what it was after
	// the last sweep (see record).
	records, swept int
	// untrack removes what Track registered on informers (the arrivals
	// handlers of OpaqueResourceVersions); Close calls them. closed is
	// set by Close.
	untrack []func()
	closed  bool
}

// write is one recorded write, as its cache can check it.
type write struct {
	// seen reports whether the cache shows the write.
	seen func() bool
	// progress is the cache's Progress channel: closed when it may have.
	progress func() <-chan struct{}
	// drop, if set, is called when the record is dropped, seen or, with
	// stale true, not (its key ran stale), so its cache stops waiting for
	// it.
	drop func(stale bool)
}

// dropped tells w's cache that w is no longer waited for: seen, or, if
// stale, because its key ran stale.
func (w write) dropped(stale bool) {
	if w.drop != nil {
		w.drop(stale)
	}
}

// New returns a Guard. It fails on a negative MaxHold, or when Metrics
// already holds a guard of that Name.
func New(opts Options) (*Guard, error) {
	if opts.MaxHold < 0 {
		return nil, fmt.Errorf("readyourwrites: Options.MaxHold (%v) must not be negative", opts.MaxHold)
	}
	if opts.MaxHold == 0 {
		opts.MaxHold = 5 * time.Second
	}
	if opts.Name == "" {
		opts.Name = "guard"
	}
	opts.Clock = informer.ClockOrReal(opts.Clock)
	m, err := newGuardMetrics(opts.Metrics, opts.Name)
	if err != nil {
		return nil, err
	}
	return &Guard{opts: opts, metrics: m, pending: map[informer.Key][]write{}, heldSince: map[informer.Key]time.Time{}}, nil
}

// Close gives the guard's metric names back to its Registry, so that a
// guard of the same Name can be made again (a new leader's term), and
// removes the handlers Track registered on informers, which usually
// outlive the guard
// (TestClosingAGuardRemovesTheHandlersItsTrackRegistered): with
// OpaqueResourceVersions, a Cache of a closed guard no longer sees writes
// arrive, and one tracked after Close fails every Wrote. Use a new guard,
// and Track again, for the next term. Closing a guard again does
// nothing: the Name it gave back may be the next term's guard's by then
// (TestClosingAnOldGuardAgainDoesNotFreeTheNameTheNextTermsGuardHolds).
func (g *Guard) Close() {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	untrack := g.untrack
	g.untrack, g.closed = nil, true
	g.mu.Unlock()
	for _, remove := range untrack {
		remove()
	}
	g.metrics.unregister()
}

// isClosed reports whether Close was called.
func (g *Guard) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// tracking registers remove, to be called by Close; false if the guard
// is closed already (the caller removes what it registered itself).
func (g *Guard) tracking(remove func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.untrack = append(g.untrack, remove)
	return true
}

// record adds w to owner's pending writes. Every time the number of
// records has doubled since the last sweep, it drops every write that
// has been seen, for all keys: a key that is never reconciled again
// must not keep its records forever. Amortised O(1) per write.
func (g *Guard) record(owner informer.Key, w write) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.seen() {
		w.dropped(false) // the cache got there first: nothing waits for it
		return
	}
	g.pending[owner] = append(g.pending[owner], w)
	g.records++
	if g.records >= 2*max(g.swept, 64) {
		g.sweepLocked()
		return
	}
	g.metrics.setPending(g.records)
}

// sweepLocked drops every write that has been seen, for all keys, and
// sets the pending gauge. The caller holds mu.
func (g *Guard) sweepLocked() {
	for key, ws := range g.pending {
		g.keepUnseenLocked(key, ws)
	}
	g.swept = g.records
	g.metrics.setPending(g.records)
}

// keepUnseenLocked keeps only key's writes that are still unseen and
// returns the Progress channel of the first of them (nil if none is
// left). The channel is taken before the check, so that a change in
// between still closes it. The caller holds mu.
func (g *Guard) keepUnseenLocked(key informer.Key, ws []write) <-chan struct{} {
	var wake <-chan struct{}
	kept := ws[:0]
	for _, w := range ws {
		progress := w.progress()
		if w.seen() {
			w.dropped(false)
			continue
		}
		if wake == nil {
			wake = progress
		}
		kept = append(kept, w)
	}
	g.records -= len(ws) - len(kept)
	clear(ws[len(kept):]) // let the dropped closures go
	if len(kept) == 0 {
		delete(g.pending, key)
	} else {
		g.pending[key] = kept
	}
	return wake
}

// waited is how long a hold that began at since waited, judged at now:
// never more than MaxHold. A hold tells its queue to ask again by then at
// the latest; a key asked later was not waiting meanwhile (its queue had
// shut down, say, and another asks now), so what it waited is capped
// (TestAHoldItsQueueAbandonedIsReportedAsNoLongerThanMaxHold).
func (g *Guard) waited(now, since time.Time) time.Duration {
	return min(now.Sub(since), g.opts.MaxHold)
}

// Hold implements workqueue.Gate: it holds key while a write recorded
// under it is not in its cache, for up to MaxHold from when it first
// held it. Past MaxHold it lets the key run, drops its records and
// counts a stale reconcile.
func (g *Guard) Hold(key informer.Key) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	since, held := g.heldSince[key]
	ws, ok := g.pending[key]
	if !ok && !held {
		return false, nil, 0 // the common case: nothing recorded
	}
	var wake <-chan struct{}
	if ok {
		wake = g.keepUnseenLocked(key, ws)
		g.metrics.setPending(g.records)
	}
	now := g.opts.Clock.Now()
	if wake == nil { // all seen (a sweep may have dropped them already)
		if held {
			delete(g.heldSince, key)
			waited := g.waited(now, since)
			g.metrics.released(waited)
			g.emit(KindReleased, key, waited.String())
		}
		return false, nil, 0
	}
	if !held {
		since = now
		g.heldSince[key] = now
		g.metrics.held()
		g.emit(KindHeld, key, "")
	}
	if left := g.opts.MaxHold - now.Sub(since); left > 0 {
		return true, wake, left
	}
	delete(g.heldSince, key)
	g.records -= len(g.pending[key])
	for _, w := range g.pending[key] {
		w.dropped(true)
	}
	delete(g.pending, key)
	g.metrics.setPending(g.records)
	g.metrics.ranStale(g.waited(now, since))
	g.emit(KindStale, key, fmt.Sprintf("its writes were not in the cache after %v", g.opts.MaxHold))
	return false, nil, 0
}

// Pending returns how many recorded writes are not yet known to be in
// their caches: the guard's memory, which it keeps bounded by dropping a
// record once its cache has caught up.
func (g *Guard) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweepLocked()
	return g.records
}
