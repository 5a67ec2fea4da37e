package simulation

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// keptView is one kept informer as the quiescent checks read it,
// whatever Go type it decodes into: a holder's last hold (unstructured)
// or a typed keeper's informer (the widget type).
type keptView struct {
	fo      *factoryOf
	name    string
	version string
	synced  bool
	cache   map[string]string // name → resourceVersion
	ready   func() error      // si.Ready of the informer, for a report
	// stream is what its handler was told, replayed; nil when it is
	// judged at its events only (a handed-over hold's handler, which
	// works on each event, may still be working through its buffer).
	stream *handlerStream
	typed  bool // a typed keeper's
}

// viewOf reads inf as a keptView, at its version, on fo.
func viewOf[T informer.Object](fo *factoryOf, inf *si.Informer[T], version string, stream *handlerStream) keptView {
	return keptView{fo: fo, name: inf.Name(), version: version, synced: inf.HasSynced(), cache: cacheOf(inf.Indexer().List()),
		ready: func() error { return si.Ready(inf) }, stream: stream}
}

// keptViews reads every informer kept now: the holders' last holds and
// the typed keepers'.
func (w *world) keptViews() []keptView {
	w.crd.mu.Lock()
	final := maps.Clone(w.crd.final)
	typed := maps.Clone(w.crd.typed)
	w.crd.mu.Unlock()
	var out []keptView
	for h, fo := range final {
		stream := h.stream
		if h.reg == nil || h.work > 0 {
			stream = nil
		}
		out = append(out, viewOf(fo, h.inf, h.version, stream))
	}
	for k := range typed {
		v := viewOf(k.fo, k.inf, CRDVersions[0], k.stream)
		v.typed = true
		out = append(out, v)
	}
	return out
}

// cacheOf is an informer's cache: name → resourceVersion.
func cacheOf[T metav1.Object](objs []T) map[string]string {
	out := map[string]string{}
	for _, obj := range objs {
		out[obj.GetName()] = obj.GetResourceVersion()
	}
	return out
}
