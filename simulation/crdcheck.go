package simulation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// keepers is how many informers each running replica keeps once the
// faults have ended: its holders' last holds (the paged holder's too)
// and its typed keeper's, each a hold or, while the CRD is
// cluster-scoped, a refusal.
const keepers = Holders + 2

// crdConverged is the custom resources scenario's convergence, once the
// faults have ended: every running replica keeps its keepers' holds (or
// refusals), and every kept informer whose version is served has
// synced, with the server's Widgets in its cache.
func (w *world) crdConverged() []Violation {
	now := time.Now()
	kept := map[string]int{}
	w.crd.mu.Lock()
	for name, n := range w.crd.refused {
		kept[name] += n
	}
	w.crd.mu.Unlock()
	views := w.keptViews()
	for _, v := range views {
		kept[v.fo.replica.name]++
		if v.version == w.crd.servedTo(v.typed) && !v.synced {
			return []Violation{{Invariant: "converged", At: now, Text: fmt.Sprintf("replica %s: %s (served) has not synced", v.fo.replica.name, v.name)}}
		}
	}
	for _, r := range w.running() {
		if kept[r.name] != keepers {
			return []Violation{{Invariant: "converged", At: now, Text: fmt.Sprintf("replica %s keeps %d holds of %d", r.name, kept[r.name], keepers)}}
		}
	}
	if v := w.heldInformersEqualServer(views); len(v) > 0 {
		return []Violation{{Invariant: "converged", At: now, Text: v[0].Text}}
	}
	return nil
}

// crdQuiescent checks, at quiescence, every informer kept (keptViews):
//
//   - "held informer equals server": an informer whose version is
//     served has synced, and caches the server's Widgets at their
//     resourceVersions;
//   - "not served says so": one whose version is not served shows it
//     (its resource_not_served gauge is 1), and, if none of Namespace is
//     served to it (the CRD is removed or cluster-scoped, or holds
//     Gadgets and it is the typed keeper's), caches nothing;
//   - "released informer stops": each factory's metrics hold the series
//     of the informers held, and of no other (a released informer gives
//     its names back once it has stopped);
//   - "handler stream consistent": what each kept informer's handler was
//     told, replayed, is its informer's cache (checked at every event
//     too, by handlerStream).
func (w *world) crdQuiescent() []Violation {
	views := w.keptViews()
	out := append(w.heldInformersEqualServer(views), w.handlerStreamsEqualCaches(views)...)
	now := time.Now()
	held := map[*factoryOf]map[string]bool{}
	for _, v := range views {
		if held[v.fo] == nil {
			held[v.fo] = map[string]bool{}
		}
		held[v.fo][v.name+" "+v.version] = true
		served := w.crd.servedTo(v.typed)
		if v.version == served {
			continue
		}
		if g, ok := gaugeOf(v.fo.metrics, "listwatch_informer_resource_not_served", v.name, v.version); !ok || g != 1 {
			out = append(out, Violation{Invariant: "not served says so", At: now, Text: fmt.Sprintf("replica %s: %s %s, served %q, has its not-served gauge at %v (found %v); its sync: %v",
				v.fo.replica.name, v.name, v.version, served, g, ok, v.ready())})
		}
		if n := len(v.cache); served == "" && n > 0 {
			out = append(out, Violation{Invariant: "not served says so", At: now, Text: fmt.Sprintf("replica %s: %s caches %d Widgets while none of Namespace is served to it (the CRD removed or cluster-scoped, or of another kind): %v",
				v.fo.replica.name, v.name, n, v.cache)})
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

// heldInformersEqualServer is "held informer equals server", over views.
func (w *world) heldInformersEqualServer(views []keptView) []Violation {
	var out []Violation
	want, _ := w.widgetsNow()
	for _, v := range views {
		if v.version != w.crd.servedTo(v.typed) {
			continue
		}
		if !v.synced || !maps.Equal(v.cache, want) {
			out = append(out, Violation{Invariant: "held informer equals server", At: time.Now(), Text: fmt.Sprintf("replica %s: %s (synced %v): cache %v, server %v",
				v.fo.replica.name, v.name, v.synced, v.cache, want)})
		}
	}
	return out
}

// handlerStreamsEqualCaches is the quiescent half of "handler stream
// consistent": each kept informer's handler, replayed, holds what its
// informer caches, whether its version is served or not (an informer
// that empties its cache of a removed CRD tells its handlers). A view
// with no stream (a handed-over hold's) is judged at its events only.
func (w *world) handlerStreamsEqualCaches(views []keptView) []Violation {
	var out []Violation
	for _, v := range views {
		if v.stream == nil {
			continue
		}
		if told := v.stream.byName(); !maps.Equal(told, v.cache) {
			out = append(out, Violation{Invariant: "handler stream consistent", At: time.Now(), Text: fmt.Sprintf("replica %s: the handler of %s was told of %v, its cache holds %v",
				v.fo.replica.name, v.name, told, v.cache)})
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
