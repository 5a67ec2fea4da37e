package simulation

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/metrics"
	si "github.com/listwatch/informer/sharedinformer"
)

// crdWorldForTest is a custom resources world with the CRD served at v1
// and two Widgets, and a replica "r0-0" whose factory reaches the server
// with no faults.
func crdWorldForTest(t *testing.T) (*world, *factoryOf) {
	t.Helper()
	w, err := newWorld(Options{Scenario: CustomResources}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.admin.Close)
	w.installCRD("v1")
	for _, name := range []string{"w-00", "w-01"} {
		w.writeWidget(t, http.MethodPost, "", fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":%q}}`, CRDGroup, name))
	}
	r := &replica{name: "r0-0", cfg: w.admin.Config()}
	fo := newFactoryOf(w, r, nil)
	if fo == nil {
		t.Fatal("no factory")
	}
	return w, fo
}

func (w *world) writeWidget(t *testing.T, method, name, body string) {
	t.Helper()
	path := fmt.Sprintf("/apis/%s/%s/namespaces/%s/%s", CRDGroup, w.crd.served(), Namespace, widgets.Resource)
	if name != "" {
		path += "/" + name
	}
	w.serveAdmin(t.Context(), method, path, body)
}

// keep asks for the Widgets at version, starts the informer with ctx,
// and keeps the hold as a holder keeps its last one.
func keep(t *testing.T, w *world, fo *factoryOf, ctx context.Context, version string) *hold {
	t.Helper()
	inf, err := fo.ask(t.Context(), w, version, "the test", stopBound)
	if err != nil {
		t.Fatal(err)
	}
	h := &hold{inf: inf, version: version}
	h.state.Store(kept)
	fo.f.Start(ctx)
	w.crd.final[h] = fo
	return h
}

func crdViolations(w *world) map[string]int {
	got := map[string]int{}
	for _, v := range w.crd.violations {
		got[v.Invariant]++
	}
	return got
}

// A sync wait that returned more than returnBound after its informer
// synced, or after its only hold was released, breaks "sync wait
// returns"; within the bound, or a release of a shared hold (others may
// hold the informer still), does not.
func TestASyncWaitThatOutlivesItsReleaseOrSyncBreaksSyncWaitReturns(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { t := t0.Add(time.Duration(ms) * time.Millisecond); return &t }
	for _, tc := range []struct {
		name             string
		ownScope         bool
		released, synced *time.Time
		returned         int
		want             int
	}{
		{"returned at the release", true, at(1000), nil, 1000, 0},
		{"returned at its deadline, 9 s after its release", true, at(1000), nil, 10000, 1},
		{"returned 9 s after a shared hold's release", false, at(1000), nil, 10000, 0},
		{"returned 5 s after it synced", false, nil, at(2000), 7000, 1},
		{"returned at its deadline, never synced nor released", true, nil, nil, 10000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), crd: newCRDWorld()}
			w.checkSyncWait("r0-0", "widgets", tc.ownScope, t0, *at(tc.returned), tc.released, tc.synced, errors.New("not synced"))
			if got := crdViolations(w)["sync wait returns"]; got != tc.want {
				t.Fatalf("sync wait returns: %d violations, want %d: %v", got, tc.want, w.crd.violations)
			}
		})
	}
}

// A Release or an InformerFor that took longer than its bound, or a
// Release that failed, breaks its invariant; not while its replica was
// paused.
func TestACallPastItsBoundBreaksReleaseReturnsUnlessItsReplicaWasPaused(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &world{opts: Options{}.withDefaults(), crd: newCRDWorld()}
	w.checkCall("release returns", "r0-0", "Release from its handler", t0, t0.Add(30*time.Second), returnBound, context.DeadlineExceeded, true)
	w.checkCall("re-ask returns", "r0-0", "InformerFor from the handler", t0, t0.Add(30*time.Second), returnBound, nil, false)
	w.checkCall("release returns", "r0-0", "Release from its holder", t0, t0.Add(time.Millisecond), stopBound, errors.New("not held"), true)
	w.checkCall("release returns", "r0-0", "Release from its holder", t0, t0.Add(time.Millisecond), stopBound, nil, false)
	if got := crdViolations(w); got["release returns"] != 2 || got["re-ask returns"] != 1 {
		t.Fatalf("violations %v, want 2 of release returns and 1 of re-ask returns", got)
	}
	w = &world{opts: Options{}.withDefaults(), crd: newCRDWorld(), pauses: []span{{slot: 0, from: t0.Add(time.Second), to: t0.Add(20 * time.Second)}}}
	w.checkCall("re-ask returns", "r0-0", "InformerFor from its holder", t0, t0.Add(30*time.Second), stopBound, nil, false)
	if got := crdViolations(w); len(got) != 0 {
		t.Fatalf("a call through a pause was reported: %v", got)
	}
}

// A handler's delete for a Widget whose UID the server still holds
// breaks "no delete of a live object"; one for a Widget deleted, or
// deleted and created again under its name, does not.
func TestADeleteOfAWidgetTheServerHoldsBreaksNoDeleteOfALiveObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		live := w.srv.Objects(widgetsGVR())[0]
		handler.OnDelete(live, false)
		if got := crdViolations(w)["no delete of a live object"]; got != 1 {
			t.Fatalf("a delete of a live Widget: %d violations, want 1", got)
		}
		w.writeWidget(t, http.MethodDelete, live.GetName(), "")
		w.writeWidget(t, http.MethodPost, "", fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":%q}}`, CRDGroup, live.GetName()))
		handler.OnDelete(live, true)
		if got := crdViolations(w)["no delete of a live object"]; got != 1 {
			t.Fatalf("a delete of a Widget since deleted and created anew was reported: %v", w.crd.violations)
		}
		stranger := live.DeepCopy()
		stranger.SetUID(types.UID("not-on-the-server"))
		handler.OnDelete(stranger, false)
		if got := crdViolations(w)["no delete of a live object"]; got != 1 {
			t.Fatalf("a delete of a Widget the server does not hold was reported: %v", w.crd.violations)
		}
	})
}

// A handler told of an add of a Widget it holds, of an update whose old
// object is not the last it was given, of an update or a delete of a
// Widget it does not hold breaks "handler stream consistent"; a life of
// add, updates and delete in order does not.
func TestAHandlerToldOfChangesOutOfOrderBreaksHandlerStreamConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		widget := func(name, rv string) *unstructured.Unstructured {
			u := &unstructured.Unstructured{}
			u.SetNamespace(Namespace)
			u.SetName(name)
			u.SetUID(types.UID("uid-" + name))
			u.SetResourceVersion(rv)
			return u
		}
		inconsistent := func() int { return crdViolations(w)["handler stream consistent"] }

		v1, v2, v3 := widget("w-a", "1"), widget("w-a", "2"), widget("w-a", "3")
		handler.OnAdd(v1, true)
		handler.OnUpdate(v1, v2)
		handler.OnUpdate(v2, v2) // a resync
		handler.OnUpdate(v2, v3)
		handler.OnDelete(v3, false)
		if got := inconsistent(); got != 0 {
			t.Fatalf("a life in order was reported: %v", w.crd.violations)
		}

		handler.OnAdd(v1, false)
		handler.OnAdd(v2, false)
		if got := inconsistent(); got != 1 {
			t.Fatalf("an add of a Widget it holds: %d violations, want 1", got)
		}
		handler.OnUpdate(v1, v3)
		if got := inconsistent(); got != 2 {
			t.Fatalf("an update from an object older than the last it was given: %d violations, want 2", got)
		}
		handler.OnDelete(widget("w-b", "4"), false)
		if got := inconsistent(); got != 3 {
			t.Fatalf("a delete of a Widget it does not hold: %d violations, want 3", got)
		}
		handler.OnUpdate(widget("w-c", "5"), widget("w-c", "6"))
		if got := inconsistent(); got != 4 {
			t.Fatalf("an update of a Widget it does not hold: %d violations, want 4", got)
		}
	})
}

// At quiescence, a kept hold whose handler, replayed, holds other
// Widgets than its informer caches breaks "handler stream consistent";
// one told of every change does not.
func TestAHandlerThatWasNotToldWhatItsCacheHoldsBreaksHandlerStreamConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		h := keep(t, w, fo, t.Context(), "v1")
		reg, err := h.inf.AddEventHandler(fo.handler(w, h))
		if err != nil {
			t.Fatal(err)
		}
		h.reg = reg
		if err := si.WaitForCacheSync(t.Context(), h.inf); err != nil {
			t.Fatal(err)
		}
		w.writeWidget(t, http.MethodPost, "", fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":"w-02"}}`, CRDGroup))
		synctest.Wait()
		if got := violations(w.handlerStreamsEqualCaches(w.keptViews())); len(got) != 0 {
			t.Fatalf("a handler told of every change was reported: %v", got)
		}

		ghost := &unstructured.Unstructured{}
		ghost.SetNamespace(Namespace)
		ghost.SetName("w-ghost")
		h.stream.add(ghost) // as if the informer had dropped it without a delete
		if got := violations(w.handlerStreamsEqualCaches(w.keptViews())); got["handler stream consistent"] != 1 {
			t.Fatalf("a handler holding a Widget its cache does not: violations %v, want one of handler stream consistent", got)
		}
	})
}

// At quiescence, a held informer of the served version that missed a
// write breaks "held informer equals server"; one of a version not
// served that does not say so, or that caches Widgets of a removed CRD,
// breaks "not served says so"; a factory whose Registry still holds the
// name of an informer nobody holds breaks "released informer stops".
func TestQuiescentChecksReportAStaleCacheASilentInformerAndANameNotGivenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		ctx, stop := context.WithCancel(t.Context())
		h := keep(t, w, fo, ctx, "v1")
		if err := si.WaitForCacheSync(t.Context(), h.inf); err != nil {
			t.Fatal(err)
		}
		if got := violations(w.crdQuiescent()); len(got) != 0 {
			t.Fatalf("a synced informer equal to the server was reported: %v", got)
		}

		stop() // the informer stops: its cache is frozen, and its name given back
		synctest.Wait()
		w.writeWidget(t, http.MethodPost, "", fmt.Sprintf(`{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":"w-02"}}`, CRDGroup))
		got := violations(w.crdQuiescent())
		if got["held informer equals server"] != 1 || got["released informer stops"] != 1 {
			t.Fatalf("a stale cache: violations %v, want one of held informer equals server and one of released informer stops (its name is free)", got)
		}

		if _, err := w.srv.RemoveCRD(widgets); err != nil {
			t.Fatal(err)
		}
		w.crd.version = ""
		got = violations(w.crdQuiescent())
		if got["not served says so"] != 2 {
			t.Fatalf("a removed CRD's stopped informer, silent and holding Widgets: violations %v, want two of not served says so", got)
		}

		delete(w.crd.final, h)
		fo.registry.Register("informer", "widgets nobody holds", CRDGroup, "v1", widgets.Resource)
		if _, err := fo.metrics.Gauge(metrics.Desc{Name: "listwatch_informer_cached_objects", Labels: []string{"name", "group", "version", "resource"},
			Help: "Objects in the informer's cache (listwatch/informer's own metric)."}, // sharedinformer's Desc: Memory refuses another for the name
			[]string{"widgets nobody holds", CRDGroup, "v1", widgets.Resource}); err != nil {
			t.Fatal(err)
		}
		keep(t, w, fo, t.Context(), "v2")
		synctest.Wait()
		got = violations(w.crdQuiescent())
		if got["released informer stops"] != 1 {
			t.Fatalf("a name held by no hold: violations %v, want one of released informer stops", got)
		}
	})
}

// CoverageGaps names every case of the custom resources scenario that a
// sum of runs' coverage never reached: all of them for no runs, none
// once each was reached, and the one left at 0.
func TestCoverageGapsNameEachCaseNoRunReached(t *testing.T) {
	if got := CoverageGaps(CustomResources, nil); len(got) != len(crdCases) {
		t.Fatalf("no runs: gaps %v, want all %d cases", got, len(crdCases))
	}
	w := &world{crd: newCRDWorld()}
	for _, c := range crdCases {
		w.crd.reach(c)
	}
	sum := w.crd.coverage()
	if got := CoverageGaps(CustomResources, sum); len(got) != 0 {
		t.Fatalf("every case reached: gaps %v, want none", got)
	}
	sum[caseReaskWaitsForStop] = 0
	if got := CoverageGaps(CustomResources, sum); len(got) != 1 || got[0] != caseReaskWaitsForStop {
		t.Fatalf("gaps %v, want [%s]", got, caseReaskWaitsForStop)
	}
	if got := CoverageGaps(LeaderElected, nil); got != nil {
		t.Fatalf("the leader-elected scenario counts no cases: gaps %v", got)
	}
}

// A crds schedule's last install, rescope or rekind is owed writes after
// it, some removes are rescopes and some are not, about one schedule in
// three re-creates the CRD for another kind, and a run that ends with
// the CRD removed restores it in most seeds, not all: "held informer
// equals server" then compares Widgets in most runs, and "not served
// says so" still judges a removed CRD in every run that ends so.
func TestCRDSchedulesOweWritesToTheLastInstallAndMostRemovedEndsAreRestored(t *testing.T) {
	const seeds = 200
	restored, kinds := 0, map[Kind]int{}
	for seed := int64(1); seed <= seeds; seed++ {
		s := NewCRDSchedule(seed, 3, 30*time.Second)
		if last, _ := crdEnd(s); last >= 0 && (s[last].Kind == InstallCRD || s[last].Kind == RescopeCRD || s[last].Kind == RekindCRD) && s[last].For != crdWrites {
			t.Fatalf("seed %d: the last %s is owed %v of writes, want %v:\n%s", seed, s[last].Kind, s[last].For, crdWrites, s)
		}
		for _, f := range s {
			kinds[f.Kind]++
		}
		if _, ok := crdRestore(seed); ok {
			restored++
		}
	}
	if kinds[RescopeCRD] < kinds[RemoveCRD]/2 || kinds[RemoveCRD] < kinds[RescopeCRD]/2 {
		t.Fatalf("%d removes and %d rescopes in %d schedules, want about as many of each", kinds[RemoveCRD], kinds[RescopeCRD], seeds)
	}
	if rekinds := kinds[RekindCRD]; rekinds < seeds/5 || rekinds > seeds/2 {
		t.Fatalf("%d rekinds in %d schedules, want about one schedule in three", rekinds, seeds)
	}
	if restored < seeds*3/4 || restored == seeds {
		t.Fatalf("%d of %d seeds restore a removed CRD, want most and not all", restored, seeds)
	}
}
