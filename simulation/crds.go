package simulation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/fakeapiserver"
)

// The custom resource of the CustomResources scenario: namespaced
// Widgets, served at one of CRDVersions at a time.
var (
	CRDGroup    = "sim.listwatch.dev"
	CRDVersions = []string{"v1", "v2"}
	widgets     = schema.GroupResource{Group: CRDGroup, Resource: "widgets"}
)

// Widgets is how many Widgets the writers keep (at most).
const Widgets = 10

// crdWorld is the custom resources scenario's part of a world: which
// version the server serves, the replicas' holds, and the violations
// seen as they happened (a delete of a live object, a wait that did not
// return).
type crdWorld struct {
	settled chan struct{} // closed when the faults end: holders stop releasing
	ended   chan struct{} // closed when the run ends: the checks' goroutines return

	mu      sync.Mutex
	version string // guarded by mu; the served version, "" while the CRD is removed
	cluster bool   // guarded by mu; the CRD is cluster-scoped (RescopeCRD), not namespaced
	kind    string // guarded by mu; the kind it holds (RekindCRD): widgetKind or gadgetKind
	// since is when version last changed; guarded by mu.
	since time.Time
	// flip is the flip under way: the CRD moves back to from before the
	// left'th discovery request from now, if it is still at to. Guarded
	// by mu.
	flip struct {
		from, to string
		left     int
		id       int // which flip of the run, from 1
	}
	flips      int                       // guarded by mu; flips started so far
	requests   int                       // guarded by mu; discovery requests of the CRD's group flipDiscovery has seen
	misled     map[string][]misledAnswer // guarded by mu; by replica, its discovery answers served while a flip was under way
	violations []Violation               // guarded by mu
	final      map[*hold]*factoryOf      // guarded by mu; each holder's last hold, kept once settled
	refused    map[string]int            // guarded by mu; by replica, the holders that keep a refusal (keepRefusal)
	typed      map[*typedKeep]struct{}   // guarded by mu; the typed keepers' informers, while they hold them
	reached    map[string]int            // guarded by mu; how often each case of crdCases was reached
}

func newCRDWorld() *crdWorld {
	return &crdWorld{kind: widgetKind, settled: make(chan struct{}), ended: make(chan struct{}), final: map[*hold]*factoryOf{}, refused: map[string]int{}, typed: map[*typedKeep]struct{}{}, reached: map[string]int{}, misled: map[string][]misledAnswer{}}
}

// served is the version the server serves the Widgets of Namespace
// in now, whatever kind the CRD holds: "" for none, while the CRD is
// removed or cluster-scoped. The unstructured holders judge by it.
func (c *crdWorld) served() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cluster {
		return ""
	}
	return c.version
}

// servedTo is the version served to a kept informer: served, but ""
// for a typed keeper's (the widget Go type) while the CRD holds another
// kind, which it cannot decode.
func (c *crdWorld) servedTo(typed bool) string {
	if typed && c.holds() != widgetKind {
		return ""
	}
	return c.served()
}

// holds is the kind the CRD holds, or held before it was removed.
func (c *crdWorld) holds() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kind
}

// refusedBy is how many of replica's holders keep a refusal.
func (c *crdWorld) refusedBy(replica string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused[replica]
}

// clusterScoped reports whether the CRD is installed cluster-scoped.
func (c *crdWorld) clusterScoped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version != "" && c.cluster
}

func (c *crdWorld) violate(invariant, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.violations = append(c.violations, Violation{Invariant: invariant, At: time.Now(), Text: fmt.Sprintf(format, args...)})
}

func (c *crdWorld) isSettled() bool {
	select {
	case <-c.settled:
		return true
	default:
		return false
	}
}

func crd(version string, cluster bool, kind string) fakeapiserver.CRD {
	return fakeapiserver.CRD{Group: CRDGroup, Version: version, Kind: kind, Plural: widgets.Resource, ClusterScoped: cluster}
}

// installCRD serves the CRD, namespaced, at version, for the kind it
// held last, with no objects, unless it is installed.
func (w *world) installCRD(version string) {
	w.crd.mu.Lock()
	defer w.crd.mu.Unlock()
	if w.crd.version != "" {
		return
	}
	w.installCRDLocked(version, false, w.crd.kind)
}

// installCRDLocked installs the CRD at version, namespaced or
// cluster-scoped, for kind. The caller holds w.crd.mu; the CRD is not
// installed.
func (w *world) installCRDLocked(version string, cluster bool, kind string) {
	if err := w.srv.InstallCRD(crd(version, cluster, kind)); err != nil {
		w.log.Error("simulation: install the CRD", "err", err)
		return
	}
	w.crd.version, w.crd.cluster, w.crd.kind, w.crd.since = version, cluster, kind, time.Now()
}

// removeCRDLocked deletes the CRD, its Widgets with it, if it is
// installed, and reports whether it was. The caller holds w.crd.mu.
func (w *world) removeCRDLocked() bool {
	if w.crd.version == "" {
		return false
	}
	if _, err := w.srv.RemoveCRD(widgets); err != nil {
		w.log.Error("simulation: remove the CRD", "err", err)
		return false
	}
	w.crd.version, w.crd.cluster, w.crd.since = "", false, time.Now()
	return true
}

// applyCRD makes a CRD fault happen now. For a move that happened, it
// returns the version the CRD moved from.
func (w *world) applyCRD(f Fault) (movedFrom string) {
	switch f.Kind {
	case InstallCRD:
		w.installCRD(f.Version)
	case RemoveCRD:
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		w.removeCRDLocked()
	case RescopeCRD:
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		version, cluster := w.crd.version, w.crd.cluster
		if w.removeCRDLocked() {
			w.installCRDLocked(version, !cluster, w.crd.kind)
		}
	case RekindCRD:
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		version, cluster, kind := w.crd.version, w.crd.cluster, gadgetKind
		if w.crd.kind == gadgetKind {
			kind = widgetKind
		}
		if w.removeCRDLocked() {
			w.installCRDLocked(version, cluster, kind)
		}
	case MoveCRD:
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		if w.crd.version == "" || w.crd.version == f.Version {
			return ""
		}
		if err := w.srv.MoveCRD(widgets, f.Version); err != nil {
			w.log.Error("simulation: move the CRD", "err", err)
			return ""
		}
		movedFrom = w.crd.version
		w.crd.version, w.crd.since = f.Version, time.Now()
	}
	return movedFrom
}

// writeWidgets is the Widgets' writers until ctx ends: as the admin,
// every 200 ms while the CRD is served namespaced, one change to a Widget
// (a Gadget while the CRD holds those) in the served version: mostly an
// update, sometimes a delete or a create of a missing one. Each is
// served straight by the server, with no network: under the CRD's lock,
// so it never meets a version just moved.
func (w *world) writeWidgets(ctx context.Context) {
	rng := rand.New(rand.NewPCG(uint64(w.opts.Seed), 0x3717e6))
	for tick := 1; ; tick++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		name := fmt.Sprintf("w-%02d", rng.IntN(Widgets))
		p := rng.IntN(10)
		w.crd.mu.Lock()
		if v := w.crd.version; v != "" && !w.crd.cluster {
			path := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", CRDGroup, v, Namespace, widgets.Resource)
			switch {
			case p < 6:
				w.serveAdmin(ctx, http.MethodPatch, path+"/"+name, fmt.Sprintf(`{"spec":{"tick":%d}}`, tick))
			case p < 7:
				w.serveAdmin(ctx, http.MethodDelete, path+"/"+name, "")
			default:
				w.serveAdmin(ctx, http.MethodPost, path, fmt.Sprintf(`{"apiVersion":"%s/%s","kind":%q,"metadata":{"name":%q},"spec":{"tick":%d}}`,
					CRDGroup, v, w.crd.kind, name, tick))
			}
		}
		w.crd.mu.Unlock()
	}
}

// serveAdmin has the server serve one request of the admin's.
func (w *world) serveAdmin(ctx context.Context, method, path, body string) {
	req := httptest.NewRequestWithContext(ctx, method, path, strings.NewReader(body))
	switch method {
	case http.MethodPatch:
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	w.srv.ServeHTTP(rec, req)
	w.log.Debug("simulation: a Widget write", "method", method, "path", path, "status", rec.Code)
}

// widgetsNow is the server's Widgets in Namespace now: name →
// resourceVersion, and the set of their UIDs.
func (w *world) widgetsNow() (map[string]string, map[string]bool) {
	objs := w.srv.Objects(widgetsGVR())
	rvs, uids := map[string]string{}, map[string]bool{}
	for _, u := range objs {
		if u.GetNamespace() == Namespace {
			rvs[u.GetName()] = u.GetResourceVersion()
			uids[string(u.GetUID())] = true
		}
	}
	return rvs, uids
}

// widgetsGVR names the Widgets to fakeapiserver.Server.Objects, which
// reads them whatever version serves them.
func widgetsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: widgets.Group, Resource: widgets.Resource}
}

// restoreBackoff is how long past Settle a restored CRD may take to be
// synced by every held informer: one told "not served" asks discovery
// again only after its backoff, up to two of a reflector's longest
// (BackoffMax 30 s, doubled by jitter).
const restoreBackoff = 2 * time.Minute

// crdRestore is whether a run whose faults left the CRD removed or
// cluster-scoped installs it again, namespaced, once that is judged
// (four seeds of five), and at which version: drawn from the seed, apart
// from the schedule.
func crdRestore(seed int64) (version string, ok bool) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc7d6))
	return CRDVersions[rng.IntN(len(CRDVersions))], rng.IntN(5) > 0
}

// restoreCRD is a second end for a run whose faults left the CRD
// removed, cluster-scoped or holding Gadgets, and whose quiescent checks
// judged that: in the seeds crdRestore picks, it installs the CRD again,
// namespaced, for Widgets (deleting the one installed first), has the
// writers write for crdWrites, and
// checks convergence and the quiescent invariants again, so that "held
// informer equals server" compares Widgets in those runs too.
func (w *world) restoreCRD(ctx context.Context) []Violation {
	version, ok := crdRestore(w.opts.Seed)
	if !ok || w.crd.servedTo(true) != "" {
		return nil
	}
	w.crd.mu.Lock()
	w.removeCRDLocked() // if cluster-scoped or of Gadgets
	w.installCRDLocked(version, false, widgetKind)
	w.crd.mu.Unlock()
	writers, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.writeWidgets(writers)
	}()
	time.Sleep(crdWrites)
	stop()
	<-done
	restored, bound := time.Now(), w.opts.Settle+restoreBackoff
	for {
		time.Sleep(time.Second)
		last := w.crdConverged()
		if len(last) == 0 {
			break
		}
		if time.Since(restored) > bound {
			return last
		}
	}
	for {
		synctest.Wait()
		stale := w.crdQuiescent()
		if len(stale) == 0 || time.Since(restored) > bound {
			w.reachAtQuiescence()
			return stale
		}
		time.Sleep(time.Second)
	}
}
