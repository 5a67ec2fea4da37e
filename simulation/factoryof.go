package simulation

import (
	"context"
	"errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/reflector"
	si "github.com/listwatch/informer/sharedinformer"
)

// factoryOf is one factory of a replica, with its metrics.
type factoryOf struct {
	f        *si.Factory
	metrics  *metrics.Memory
	registry *metrics.Registry
	replica  *replica
	// onError holds the holds to release on their informer's first
	// failure, by informer name; guarded by mu.
	mu      sync.Mutex
	onError map[string][]*hold
	// releasing counts the Releases in progress from a goroutine not an
	// informer's, by informer: those that may wait for it to stop (for
	// the coverage of caseReaskWaitsForStop); guarded by mu.
	releasing map[widgetInformer]int
}

// newFactoryOf makes a factory for replica r, with scheme if not nil
// (for an informer of a Go type the default scheme does not know).
func newFactoryOf(w *world, r *replica, scheme *runtime.Scheme) *factoryOf {
	fo := &factoryOf{metrics: metrics.NewMemory(), replica: r, onError: map[string][]*hold{}, releasing: map[widgetInformer]int{}}
	var err error
	if fo.registry, err = metrics.NewRegistry(fo.metrics); err != nil {
		w.log.Error("simulation: metrics", "err", err)
		return nil
	}
	opts := si.FactoryOptions{Metrics: fo.registry, Scheme: scheme, Logger: w.log.With("replica", r.name), OnError: func(err error) { fo.failed(w, err) }}
	if w.opts.Trace != nil {
		opts.Trace = func(e informer.TraceEvent) {
			e.Detail = r.name + ": " + e.Detail
			w.opts.Trace(e)
		}
	}
	if fo.f, err = si.NewFactory(r.cfg, opts); err != nil {
		w.log.Error("simulation: factory", "err", err)
		return nil
	}
	return fo
}

// failed is the factory's OnError: it releases the holds that asked to
// be released on their informer's first failure, on the informer's own
// goroutine, where Release must return at once.
func (fo *factoryOf) failed(w *world, err error) {
	var re *reflector.Error
	if !errors.As(err, &re) {
		return
	}
	fo.mu.Lock()
	holds := fo.onError[re.Name]
	delete(fo.onError, re.Name)
	fo.mu.Unlock()
	for _, h := range holds {
		if h.state.Load() == live {
			w.crd.reach(caseReleaseFromOnError)
		}
		fo.release(w, h, "OnError", returnBound)
	}
}

// release gives h back once (whoever comes first), and checks that it
// returned within bound, and that h's handler stops within stopBound.
func (fo *factoryOf) release(w *world, h *hold, where string, bound time.Duration) {
	if !h.state.CompareAndSwap(live, released) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	h.releasedAt.Store(&start)
	var ended func()
	if bound == stopBound { // not on an informer's goroutine: it may wait for the stop
		ended = fo.releaseBegan(h.inf)
	}
	err := si.Release(ctx, fo.f, h.inf)
	if ended != nil {
		ended()
	}
	w.checkCall("release returns", fo.replica.name, "Release of "+h.inf.Name()+" from "+where, start, time.Now(), bound, err, err != nil)
	if h.reg == nil {
		return
	}
	// Others may hold the informer still: its handlers then go on, so
	// this holder's is removed, after the release (a removed handler's
	// Synced closes, which would end a sync wait before the release
	// could). Stopped then closes either way.
	_ = h.inf.RemoveEventHandler(h.reg) // fails if the release ended it already
	w.crdWatchers.Go(func() {
		select {
		case <-h.reg.Stopped():
		case <-w.crd.ended:
		case <-time.After(stopBound + callTimeout): // a call of the handler's own may take callTimeout
			if !w.paused(interval{replica: fo.replica.name, start: start, end: time.Now()}) {
				w.crd.violate("released informer stops", "replica %s: the handler of %s released from %s at %s has not stopped", fo.replica.name, h.inf.Name(), where, clock(start))
			}
		}
	})
}

// ask is one InformerFor of the Widgets at version, checked to return
// within bound.
func (fo *factoryOf) ask(ctx context.Context, w *world, version string, where string, bound time.Duration, opts ...si.InformerOption) (widgetInformer, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	before := fo.releasingNow()
	start := time.Now()
	opts = append([]si.InformerOption{si.ForResource(schema.GroupVersionResource{Group: CRDGroup, Version: version, Resource: widgets.Resource}), si.InNamespace(Namespace)}, opts...)
	inf, err := si.InformerFor[*unstructured.Unstructured](cctx, fo.f, opts...)
	if ctx.Err() == nil { // a kill ends the call: not the library's doing
		w.checkCall("re-ask returns", fo.replica.name, "InformerFor of widgets "+version+" from "+where, start, time.Now(), bound, err, false)
	}
	if _, ok := errors.AsType[*si.StillStoppingError](err); ok {
		w.crd.reach(caseReaskInHandlerMeetsStopping)
	}
	if err == nil && askWaitedForStop(before, inf, start) {
		w.crd.reach(caseReaskWaitsForStop)
	}
	return inf, err
}

// handler checks every delete against the server and every event
// against the ones before it (h.stream), and releases the hold on its
// first event if the hold asked for that.
func (fo *factoryOf) handler(w *world, h *hold) si.Handler[*unstructured.Unstructured] {
	h.stream = newHandlerStream()
	consistent := func(wrong string) {
		if wrong != "" {
			w.crd.violate("handler stream consistent", "replica %s: the handler of %s got %s", fo.replica.name, h.inf.Name(), wrong)
		}
	}
	var once sync.Once
	first := func() {
		if h.mode != releaseFromHandler {
			return
		}
		once.Do(func() {
			fo.release(w, h, "its handler", returnBound)
			if !h.reask {
				return
			}
			inf, err := fo.ask(context.Background(), w, h.version, "the handler", returnBound, h.opts...)
			if err == nil {
				fo.release(w, &hold{inf: inf}, "its handler, asked again", returnBound)
			}
		})
	}
	work := func() {
		if h.work > 0 {
			time.Sleep(h.work) // a handler busy with each event: a release stops its informer only once the call returns
		}
	}
	return si.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(u *unstructured.Unstructured, _ bool) { consistent(h.stream.add(u)); first(); work() },
		UpdateFunc: func(old, u *unstructured.Unstructured) { consistent(h.stream.update(old, u)); first(); work() },
		DeleteFunc: func(u *unstructured.Unstructured, unknown bool) {
			consistent(h.stream.remove(u))
			w.checkDelete(fo, h.inf.Name(), u, unknown)
			first()
			work()
		},
	}
}

// checkDelete is "no delete of a live object": the informer named name,
// of fo, told its handler of a delete of obj, which the server must not
// hold (by UID) at that moment, unless the delete comes from emptying
// the cache (final state unknown) after two flips each misled one of the
// two looks that judge a resource gone, as chapter 06 documents
// (misledTwice).
func (w *world) checkDelete(fo *factoryOf, name string, obj metav1.Object, unknown bool) {
	if _, uids := w.widgetsNow(); uids[string(obj.GetUID())] {
		if unknown && w.crd.misledTwice(fo.replica.name, time.Now()) {
			w.crd.reach(caseMisledTwice)
			return
		}
		w.crd.violate("no delete of a live object", "replica %s: %s got a delete of %s (uid %s, rv %s, final state unknown %v) that the server holds",
			fo.replica.name, name, obj.GetName(), obj.GetUID(), obj.GetResourceVersion(), unknown)
	}
}
