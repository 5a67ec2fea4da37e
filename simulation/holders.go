package simulation

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	si "github.com/listwatch/informer/sharedinformer"
)

// The custom resources scenario's bounds. A sync wait, a Release and an
// InformerFor wait for nothing on the network once the informer they
// wait for is released, synced or stopped, so their bounds are short;
// a Release from elsewhere waits for the informer's requests to end,
// which a pause holds back (excused).
const (
	// syncTimeout bounds each sync wait (its ctx): an informer whose
	// version is not served waits that long.
	syncTimeout = 10 * time.Second
	// returnBound: a sync wait returns within it of its informer's
	// release or sync; a Release or an InformerFor on an informer's own
	// goroutine returns within it.
	returnBound = time.Second
	// stopBound: a Release from another goroutine returns, an InformerFor
	// after a release returns, and a released informer's handlers stop,
	// within it (outside pauses).
	stopBound = 10 * time.Second
	// callTimeout is the ctx of every Release and InformerFor: a call
	// that waits for itself waits that long, then fails.
	callTimeout = 30 * time.Second
)

// Holders is how many holders each replica runs on its shared factory;
// one more holds a paged informer on a factory of its own.
const Holders = 3

// How a hold ends, drawn for each hold.
const (
	releaseByHolder    = iota // the holder releases it after a while
	releaseDuringSync         // the holder releases it while its sync wait runs
	releaseFromHandler        // its handler releases it on its first event, and may ask again there
	releaseFromOnError        // the factory's OnError releases it on its first failure
	releaseHandedOver         // its holder releases it while a successor asks for its scope (handOver)
	releaseAfterStop          // (paged holder) the ctx given to Start ends, then the holder releases it
	modes
)

var modeNames = [modes]string{"by its holder", "during its sync wait", "from its handler", "from OnError", "handed over", "after its Start ctx ended"}

// customResources is the scenario of sharedinformer's holders and
// Release: every replica runs Holders holders on one factory, and a
// paged holder on a factory of its own; each holder asks for an
// informer of the Widgets at a version of CRDVersions, waits for its
// sync, holds it a while, releases it (in one of the modes) and asks
// again, while the CRD is removed, installed and moved under it.
type customResources struct{}

func (customResources) String() string  { return "crds" }
func (customResources) rings() []string { return nil }
func (customResources) schedule(seed int64, replicas int, length time.Duration) Schedule {
	return NewCRDSchedule(seed, replicas, length)
}

// widgetInformer is an informer of the Widgets, as the holders ask for it.
type widgetInformer = *si.Informer[*unstructured.Unstructured]

// ownScope reports whether h asks for a scope of its own: a label
// selector no Widget's labels fail, unique to it. Its holder is then its
// informer's last, so its release stops the informer, ends its sync
// wait, and an ask again from its handler meets the informer still
// stopping. The holds released by their holder share one scope.
func (h *hold) ownScope() bool { return h.mode != releaseByHolder && h.mode != releaseAfterStop }

// A hold's states.
const (
	live int32 = iota
	released
	kept
)

// hold is one InformerFor of a holder, until it is released.
type hold struct {
	inf     widgetInformer
	reg     *si.Registration
	version string
	mode    int
	reask   bool                // releaseFromHandler: ask InformerFor again in the handler
	work    time.Duration       // how long each call of its handler works (releaseHandedOver); 0 otherwise
	opts    []si.InformerOption // the scope and shape it was asked with, beyond the resource
	// state is live, released (by whoever came first) or kept (its
	// holder keeps it once the faults end: nothing releases it then).
	state atomic.Int32
	// stopStart ends the ctx its informer was started with, for
	// releaseAfterStop; nil otherwise.
	stopStart context.CancelFunc
	// releasedAt is when its release began; nil before.
	releasedAt atomic.Pointer[time.Time]
	// stream is what its handler was told, replayed (nil before
	// fo.handler made the handler).
	stream *handlerStream
}

func (customResources) run(ctx context.Context, w *world, r *replica) {
	var wg sync.WaitGroup
	shared := newFactoryOf(w, r, nil)
	if shared == nil {
		return
	}
	for i := range Holders + 1 {
		rng := holderRand(w.opts.Seed, r.name, i)
		after := r.boot.next()
		wg.Go(func() {
			if !startAfter(ctx, &r.link.gate, after) {
				return
			}
			if i == Holders {
				pagedHolder(ctx, w, r, rng, fmt.Sprintf("%s.%d", r.name, i))
				return
			}
			holder(ctx, w, shared, rng, fmt.Sprintf("%s.%d", r.name, i), false)
		})
	}
	after := r.boot.next()
	wg.Go(func() {
		if startAfter(ctx, &r.link.gate, after) {
			typedKeeper(ctx, w, r)
		}
	})
	wg.Wait()
	shared.f.Wait() // every informer started with ctx has stopped
}

// holderRand is holder i of replica's own random source: its choices
// are the seed's, whatever the other holders do.
func holderRand(seed int64, replica string, i int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/holder-%d", replica, i)
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// holder asks, waits, holds and releases, again and again, until the
// faults end; then it keeps one hold until ctx ends.
//
// name, the replica's name and the holder's number, names its holds'
// own scopes with the count of its cycles: the same on every run of a
// seed, so their requests, and the faults drawn from them, are too.
func holder(ctx context.Context, w *world, fo *factoryOf, rng *rand.Rand, name string, paged bool) {
	for n := 0; ctx.Err() == nil; n++ {
		h := &hold{version: CRDVersions[0], mode: rng.IntN(releaseAfterStop)}
		if rng.IntN(10) < 3 {
			h.version = CRDVersions[1]
		}
		h.reask = rng.IntN(2) == 0
		releaseAfter := time.Duration(rng.IntN(2000)) * time.Millisecond
		holdFor := time.Duration(200+rng.IntN(4800)) * time.Millisecond
		if paged && rng.IntN(3) == 0 {
			h.mode = releaseAfterStop
		}
		if w.crd.isSettled() {
			h.mode = releaseByHolder
		}
		var successorAfter time.Duration
		if h.mode == releaseHandedOver {
			h.work = time.Duration(100+rng.IntN(400)) * time.Millisecond
			successorAfter = time.Duration(1+rng.IntN(100)) * time.Millisecond
		}
		if err := cycle(ctx, w, fo, h, fmt.Sprintf("%s.%d", name, n), releaseAfter, holdFor, paged); err != nil {
			if w.crd.isSettled() && keepRefusal(ctx, w, fo, err) {
				return
			}
			informer.Sleep(ctx, informer.RealClock{}, 500*time.Millisecond)
			continue
		}
		if w.crd.isSettled() && h.state.CompareAndSwap(live, kept) {
			w.crd.mu.Lock()
			w.crd.final[h] = fo
			w.crd.mu.Unlock()
			<-ctx.Done()
			w.crd.mu.Lock()
			delete(w.crd.final, h)
			w.crd.mu.Unlock()
			if h.stopStart != nil {
				h.stopStart()
			}
			return
		}
		if h.mode == releaseHandedOver {
			handOver(ctx, w, fo, h, successorAfter)
			continue
		}
		fo.release(w, h, "its holder", stopBound)
		if h.stopStart != nil {
			h.stopStart()
		}
	}
}

// handOver releases h, the only hold of its scope, while a successor on
// another goroutine asks for the same scope after a moment (after). The
// informer stops only once its handler's current call returns (each
// works h.work), so the successor's InformerFor meets it still stopping
// and waits for the stop ("re-ask returns" within stopBound; counted as
// caseReaskWaitsForStop), then gets a fresh informer, which it holds
// through its sync wait and releases. It returns once both are done.
func handOver(ctx context.Context, w *world, fo *factoryOf, h *hold, after time.Duration) {
	var successor sync.WaitGroup
	successor.Go(func() {
		select {
		case <-time.After(after):
		case <-ctx.Done():
			return
		}
		inf, err := fo.ask(ctx, w, h.version, "its successor, as its release stops", stopBound, h.opts...)
		if err != nil {
			return
		}
		next := &hold{inf: inf, version: h.version, mode: releaseHandedOver, opts: h.opts}
		if next.reg, err = inf.AddEventHandler(fo.handler(w, next)); err != nil {
			fo.release(w, next, "its successor, after AddEventHandler failed", stopBound)
			return
		}
		fo.f.Start(ctx)
		syncWait(ctx, w, fo, next, 0)
		fo.release(w, next, "its successor", stopBound)
	})
	fo.release(w, h, "its holder, handing over", stopBound)
	successor.Wait()
}

// keepRefusal is a holder's end, once the faults have ended, when
// InformerFor refused its informer for what the CRD is now: its
// namespace with a *ScopeError while the CRD is cluster-scoped, or (the
// typed keeper's) its Go type with a *KindError while the CRD holds
// Gadgets. The holder keeps the refusal, as it would keep a hold, until
// ctx ends. It reports false for any other failure, which the holder
// asks again after, and for a refusal of what the server serves to it,
// which it reports as a violation.
func keepRefusal(ctx context.Context, w *world, fo *factoryOf, err error) bool {
	_, scope := errors.AsType[*si.ScopeError](err)
	_, kind := errors.AsType[*si.KindError](err)
	switch {
	case scope && !w.crd.clusterScoped():
		w.crd.violate("refused only when not served", "replica %s: InformerFor refused the Widgets of %s, which the server serves namespaced: %v", fo.replica.name, Namespace, err)
		return false
	case scope:
		w.crd.reach(caseRefusedClusterScoped)
	case kind && w.crd.holds() == widgetKind:
		w.crd.violate("refused only when not served", "replica %s: InformerFor refused the widget Go type, whose kind the CRD holds: %v", fo.replica.name, err)
		return false
	case kind:
		w.crd.reach(caseRefusedOtherKind)
	default:
		return false
	}
	w.crd.mu.Lock()
	w.crd.refused[fo.replica.name]++
	w.crd.mu.Unlock()
	<-ctx.Done()
	w.crd.mu.Lock()
	w.crd.refused[fo.replica.name]--
	w.crd.mu.Unlock()
	return true
}

// cycle is one hold until its release is due; it returns the error of
// InformerFor or AddEventHandler if either failed (a discovery error in
// a fault, a namespace refused while the CRD is cluster-scoped).
func cycle(ctx context.Context, w *world, fo *factoryOf, h *hold, scope string, releaseAfter, holdFor time.Duration, paged bool) error {
	var opts []si.InformerOption
	if h.ownScope() {
		opts = append(opts, si.WithLabels("sim-hold!="+scope))
	}
	if paged {
		opts = append(opts, si.WithReflector(reflector.Tuning{PageSize: 2}))
	}
	h.opts = opts
	inf, err := fo.ask(ctx, w, h.version, "its holder", stopBound, opts...)
	if err != nil {
		return err
	}
	h.inf = inf
	if h.reg, err = inf.AddEventHandler(fo.handler(w, h)); err != nil {
		fo.release(w, h, "its holder, after AddEventHandler failed", stopBound)
		return err
	}
	if h.mode == releaseFromOnError {
		fo.mu.Lock()
		fo.onError[inf.Name()] = append(fo.onError[inf.Name()], h)
		fo.mu.Unlock()
	}
	if h.mode == releaseAfterStop {
		var startCtx context.Context
		startCtx, h.stopStart = context.WithCancel(ctx)
		fo.f.Start(startCtx)
	} else {
		fo.f.Start(ctx)
	}
	syncWait(ctx, w, fo, h, releaseAfter)
	select {
	case <-time.After(holdFor):
	case <-w.crd.settled:
	case <-ctx.Done():
	}
	if h.mode == releaseAfterStop && !w.crd.isSettled() {
		h.stopStart()
		select {
		case <-h.reg.Stopped():
		case <-ctx.Done():
		}
	}
	return nil
}

// syncWait waits for h's informer and handler to sync, releasing it
// meanwhile if its mode says so, and checks that the wait returned
// within returnBound of the release, or of the sync.
func syncWait(ctx context.Context, w *world, fo *factoryOf, h *hold, releaseAfter time.Duration) {
	var syncedAt atomic.Pointer[time.Time]
	wctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	done := make(chan struct{})
	var watchers sync.WaitGroup
	defer watchers.Wait()
	defer close(done)
	watchers.Go(func() {
		for _, s := range []si.Syncer{h.inf, h.reg} {
			select {
			case <-s.Synced():
			case <-done:
				return
			}
		}
		now := time.Now()
		syncedAt.Store(&now)
	})
	if h.mode == releaseDuringSync {
		watchers.Go(func() {
			select {
			case <-time.After(releaseAfter):
				fo.release(w, h, "its holder, during its sync wait", stopBound)
			case <-done:
			}
		})
	}
	start := time.Now()
	err := si.WaitForCacheSync(wctx, h.inf, h.reg)
	end := time.Now()
	if h.ownScope() && h.releasedAt.Load() != nil && syncedAt.Load() == nil {
		w.crd.reach(caseSyncWaitEndedByRelease)
	}
	w.checkSyncWait(fo.replica.name, h.inf.Name(), h.ownScope(), start, end, h.releasedAt.Load(), syncedAt.Load(), err)
}

// pagedHolder is a holder on a factory of its own, whose informer lists
// in pages of two: a list the CRD's removal cuts between two pages.
func pagedHolder(ctx context.Context, w *world, r *replica, rng *rand.Rand, name string) {
	fo := newFactoryOf(w, r, nil)
	if fo == nil {
		return
	}
	holder(ctx, w, fo, rng, name, true)
	fo.f.Wait()
}

// checkCall is "release returns" and "re-ask returns": a call of
// replica's that began at start and returned at end, with err, took at
// most bound, and did not fail (if failed says it did), unless the
// replica was paused meanwhile.
func (w *world) checkCall(invariant, replica, what string, start, end time.Time, bound time.Duration, err error, failed bool) {
	if (failed || end.Sub(start) > bound) && !w.paused(interval{replica: replica, start: start, end: end}) {
		w.crd.violate(invariant, "replica %s: %s took %v (bound %v): %v", replica, what, end.Sub(start), bound, err)
	}
}

// checkSyncWait is "sync wait returns": a sync wait for the informer
// named name, begun at start, returned at end with err, within
// returnBound of its informer and handler syncing (syncedAt), or of its
// hold's release (releasedAt) if the hold was the informer's only one
// (ownScope: others may hold it still, and their informer syncs or not).
func (w *world) checkSyncWait(replica, name string, ownScope bool, start, end time.Time, releasedAt, syncedAt *time.Time, err error) {
	for _, c := range []struct {
		what string
		at   *time.Time
	}{{"was released", releasedAt}, {"synced", syncedAt}} {
		if c.at == nil || end.Sub(*c.at) <= returnBound || c.what == "was released" && !ownScope {
			continue
		}
		w.crd.violate("sync wait returns", "replica %s: the sync wait for %s begun %s returned %s, %v after it %s (%s): %v",
			replica, name, clock(start), clock(end), end.Sub(*c.at), c.what, clock(*c.at), err)
	}
}
