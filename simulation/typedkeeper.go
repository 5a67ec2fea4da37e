package simulation

import (
	"context"
	"time"

	informer "github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// typedKeep is the typed keeper's informer, while it holds one: an
// informer of the Widgets at CRDVersions[0] decoded into the widget Go
// type, on a factory of its own, which it never releases.
type typedKeep struct {
	inf    *si.Informer[*widget]
	fo     *factoryOf
	stream *handlerStream
}

// typedKeeper is each replica's one informer of a Go type for the
// custom resource, beside the holders' unstructured ones: it asks once
// (again after a failure, such as a namespace refused while the CRD is
// cluster-scoped) and keeps what it got until ctx ends, its handler's
// every event checked as the holders' are ("handler stream consistent",
// "no delete of a live object"). The quiescent checks judge it as a
// kept hold (keptViews). Once the faults end, a refusal is kept as the
// holders keep theirs (keepRefusal).
func typedKeeper(ctx context.Context, w *world, r *replica) {
	fo := newFactoryOf(w, r, widgetScheme())
	if fo == nil {
		return
	}
	defer fo.f.Wait() // every informer started with ctx has stopped
	for ctx.Err() == nil {
		k, err := keepTyped(ctx, w, fo)
		if err == nil {
			w.crd.mu.Lock()
			w.crd.typed[k] = struct{}{}
			w.crd.mu.Unlock()
			<-ctx.Done()
			w.crd.mu.Lock()
			delete(w.crd.typed, k)
			w.crd.mu.Unlock()
			return
		}
		if w.crd.isSettled() && keepRefusal(ctx, w, fo, err) {
			return
		}
		informer.Sleep(ctx, informer.RealClock{}, 500*time.Millisecond)
	}
}

// keepTyped asks for the typed informer, adds its checked handler and
// starts it.
func keepTyped(ctx context.Context, w *world, fo *factoryOf) (*typedKeep, error) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	inf, err := si.InformerFor[*widget](cctx, fo.f, si.ForResource(widgetsGVR().GroupResource().WithVersion(CRDVersions[0])), si.InNamespace(Namespace))
	if ctx.Err() == nil { // a kill ends the call: not the library's doing
		w.checkCall("re-ask returns", fo.replica.name, "InformerFor of typed widgets from the typed keeper", start, time.Now(), stopBound, err, false)
	}
	if err != nil {
		return nil, err
	}
	k := &typedKeep{inf: inf, fo: fo, stream: newHandlerStream()}
	broke := func(wrong string) {
		w.crd.violate("handler stream consistent", "replica %s: the handler of %s got %s", fo.replica.name, inf.Name(), wrong)
	}
	handler := replay[*widget](k.stream, broke)
	deletes := si.HandlerFuncs[*widget]{
		AddFunc:    handler.OnAdd,
		UpdateFunc: handler.OnUpdate,
		DeleteFunc: func(obj *widget, unknown bool) {
			handler.OnDelete(obj, unknown)
			w.checkDelete(fo, inf.Name(), obj, unknown)
		},
	}
	if _, err := inf.AddEventHandler(deletes); err != nil {
		_ = si.Release(cctx, fo.f, inf) // give back the hold just taken
		return nil, err
	}
	fo.f.Start(ctx)
	return k, nil
}
