package simulation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	si "github.com/listwatch/informer/sharedinformer"
)

// crdConverged is the custom resources scenario's convergence, once the
// faults have ended: every running replica's holders keep their last
// hold (or, while the CRD is cluster-scoped, its refusal), and every
// held informer whose version is served has synced, with the server's
// Widgets in its cache.
func (w *world) crdConverged() []Violation {
	now := time.Now()
	kept := map[string]int{}
	w.crd.mu.Lock()
	final := maps.Clone(w.crd.final)
	for name, n := range w.crd.refused {
		kept[name] += n
	}
	w.crd.mu.Unlock()
	for h, fo := range final {
		kept[fo.replica.name]++
		if v := w.crd.served(); v == h.version && !h.inf.HasSynced() {
			return []Violation{{Invariant: "converged", At: now, Text: fmt.Sprintf("replica %s: %s (served) has not synced", fo.replica.name, h.inf.Name())}}
		}
	}
	for _, r := range w.running() {
		if kept[r.name] != Holders+1 {
			return []Violation{{Invariant: "converged", At: now, Text: fmt.Sprintf("replica %s keeps %d holds of %d", r.name, kept[r.name], Holders+1)}}
		}
	}
	if v := w.heldInformersEqualServer(); len(v) > 0 {
		return []Violation{{Invariant: "converged", At: now, Text: v[0].Text}}
	}
	return nil
}

// crdQuiescent checks, at quiescence, every hold the holders keep:
//
//   - "held informer equals server": an informer whose version is
//     served has synced, and caches the server's Widgets at their
//     resourceVersions;
//   - "not served says so": one whose version is not served shows it
//     (its resource_not_served gauge is 1), and, if no version is
//     served (the CRD is removed), caches nothing;
//   - "released informer stops": each factory's metrics hold the series
//     of the informers held, and of no other (a released informer gives
//     its names back once it has stopped);
//   - "handler stream consistent": what each kept hold's handler was
//     told, replayed, is its informer's cache (checked at every event
//     too, by handlerStream).
func (w *world) crdQuiescent() []Violation {
	out := append(w.heldInformersEqualServer(), w.handlerStreamsEqualCaches()...)
	now := time.Now()
	served := w.crd.served()
	w.crd.mu.Lock()
	final := maps.Clone(w.crd.final)
	w.crd.mu.Unlock()
	held := map[*factoryOf]map[string]bool{}
	for h, fo := range final {
		if held[fo] == nil {
			held[fo] = map[string]bool{}
		}
		held[fo][h.inf.Name()+" "+h.version] = true
		if h.version == served {
			continue
		}
		if g, ok := gaugeOf(fo.metrics, "listwatch_informer_resource_not_served", h.inf.Name(), h.version); !ok || g != 1 {
			out = append(out, Violation{Invariant: "not served says so", At: now, Text: fmt.Sprintf("replica %s: %s %s, served %q, has its not-served gauge at %v (found %v); its sync: %v",
				fo.replica.name, h.inf.Name(), h.version, served, g, ok, si.Ready(h.inf))})
		}
		if n := h.inf.Indexer().Len(); served == "" && n > 0 {
			out = append(out, Violation{Invariant: "not served says so", At: now, Text: fmt.Sprintf("replica %s: %s caches %d Widgets while none of Namespace is served (the CRD removed or cluster-scoped): %v",
				fo.replica.name, h.inf.Name(), n, cacheOf(h.inf.Indexer().List()))})
		}
	}
	for fo, names := range held {
		if got := registeredInformers(fo); !maps.Equal(got, names) {
			out = append(out, Violation{Invariant: "released informer stops", At: now, Text: fmt.Sprintf("replica %s: its factory's metrics registry holds the names of informers %v, it holds %v",
				fo.replica.name, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(names)))})
		}
	}
	return out
}

// heldInformersEqualServer is "held informer equals server".
func (w *world) heldInformersEqualServer() []Violation {
	var out []Violation
	served := w.crd.served()
	want, _ := w.widgetsNow()
	w.crd.mu.Lock()
	final := maps.Clone(w.crd.final)
	w.crd.mu.Unlock()
	for h, fo := range final {
		if h.version != served {
			continue
		}
		if got := cacheOf(h.inf.Indexer().List()); !h.inf.HasSynced() || !maps.Equal(got, want) {
			out = append(out, Violation{Invariant: "held informer equals server", At: time.Now(), Text: fmt.Sprintf("replica %s: %s (synced %v): cache %v, server %v",
				fo.replica.name, h.inf.Name(), h.inf.HasSynced(), got, want)})
		}
	}
	return out
}

// handlerStreamsEqualCaches is the quiescent half of "handler stream
// consistent": each kept hold's handler, replayed, holds what its
// informer caches, whether its version is served or not (an informer
// that empties its cache of a removed CRD tells its handlers). A hold
// whose handler works on each event (a handed-over one) may still be
// working through its buffer at quiescence, so it is judged only at its
// events.
func (w *world) handlerStreamsEqualCaches() []Violation {
	var out []Violation
	w.crd.mu.Lock()
	final := maps.Clone(w.crd.final)
	w.crd.mu.Unlock()
	for h, fo := range final {
		if h.stream == nil || h.reg == nil || h.work > 0 {
			continue
		}
		if told, cached := h.stream.byName(), cacheOf(h.inf.Indexer().List()); !maps.Equal(told, cached) {
			out = append(out, Violation{Invariant: "handler stream consistent", At: time.Now(), Text: fmt.Sprintf("replica %s: the handler of %s was told of %v, its cache holds %v",
				fo.replica.name, h.inf.Name(), told, cached)})
		}
	}
	return out
}

// gaugeOf reads the gauge name of the informer named informerName, of
// the Widgets at version.
func gaugeOf(m interface{ String() string }, name, informerName, version string) (float64, bool) {
	labels := fmt.Sprintf("{name=%q,group=%q,version=%q,", informerName, CRDGroup, version)
	for line := range strings.Lines(m.String()) {
		line = strings.TrimSpace(line)
		at := strings.LastIndexByte(line, ' ')
		if at > 0 && strings.HasPrefix(line, name+labels) {
			v, err := strconv.ParseFloat(line[at+1:], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// registeredInformers is the set of "name version" of the informers
// whose identity fo's metrics Registry holds: those that have not given
// their names back. Each identity the Provider's series show is tried:
// one that registers was free (and is given back at once). Asked at
// quiescence, when no holder asks for an informer.
func registeredInformers(fo *factoryOf) map[string]bool {
	out := map[string]bool{}
	for line := range strings.Lines(fo.metrics.String()) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "listwatch_informer_cached_objects{name=")
		if !ok {
			continue
		}
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			continue
		}
		name, _ := strconv.Unquote(quoted)
		rest = strings.TrimPrefix(rest[len(quoted):], fmt.Sprintf(",group=%q,version=", CRDGroup))
		quoted, err = strconv.QuotedPrefix(rest)
		if err != nil {
			continue
		}
		version, _ := strconv.Unquote(quoted)
		if err := fo.registry.Register("informer", name, CRDGroup, version, widgets.Resource); err == nil {
			fo.registry.Unregister("informer", name, CRDGroup, version, widgets.Resource)
			continue
		}
		out[name+" "+version] = true
	}
	return out
}
