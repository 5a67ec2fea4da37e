package simulation

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/metrics"
)

// The checker reports each invariant it keeps when a history breaks it:
// these tests hand it broken histories and states, and one that keeps
// it, so that a checker that reports nothing would fail them.

// violations counts the violations of each invariant.
func violations(vs []Violation) map[string]int {
	got := map[string]int{}
	for _, v := range vs {
		got[v.Invariant]++
	}
	return got
}

// A term that began after another with a fence not greater, and a term
// with no fence, break "fences grow"; growing fences do not.
func TestATermThatBeganLaterWithoutAGreaterFenceBreaksFencesGrow(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	history := func(fences ...uint64) []Event {
		var events []Event
		for i, f := range fences {
			m := []string{"m-a", "m-b", "m-c"}[i]
			events = append(events,
				Event{At: at(10 * i), What: TermStart, Replica: "r0-0", Ring: "web", Member: m, Fence: f},
				Event{At: at(10*i + 5), What: TermEnd, Replica: "r0-0", Ring: "web", Member: m, Deadline: at(10*i + 5)})
		}
		return events
	}
	for _, tc := range []struct {
		name   string
		fences []uint64
		want   int
	}{
		{"growing", []uint64{1, 2, 3}, 0},
		{"a later term with a smaller fence", []uint64{1, 3, 2}, 1},
		{"a later term with the same fence", []uint64{1, 2, 2}, 1},
		{"a term with no fence", []uint64{1, 0, 3}, 2}, // no fence, and not greater than 1
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: history(tc.fences...)}}
			if got := violations(w.checkHistory(nil)); got["fences grow"] != tc.want || len(got) > min(tc.want, 1) {
				t.Fatalf("fences %v: violations %v, want %d of fences grow and nothing else", tc.fences, got, tc.want)
			}
		})
	}
}

// twoTermsInWeb is a world whose history holds two terms of ring web:
// m-a's from 0 s to 10 s, m-b's from 1 s to 20 s; at(s) is the moment s
// seconds in.
func twoTermsInWeb() (w *world, at func(s int) time.Time) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at = func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return &world{opts: Options{}.withDefaults(), hist: &History{events: []Event{
		{At: at(0), What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-a", Fence: 1},
		{At: at(1), What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-b", Fence: 2},
		{At: at(10), What: TermEnd, Replica: "r0-0", Ring: "web", Member: "m-a", Deadline: at(10)},
		{At: at(20), What: TermEnd, Replica: "r1-0", Ring: "web", Member: "m-b", Deadline: at(20)},
	}}}, at
}

// An object relabelled from a member straight to another while the old
// member's term runs breaks "moves only by drain"; the same move after
// that term ended does not. A child is no exception: it leaves a live
// member by a drain too, even when its parent has left that member.
func TestAnObjectMovedOffAMemberInItsTermBreaksMovesOnlyByDrain(t *testing.T) {
	w, at := twoTermsInWeb()
	for _, tc := range []struct {
		name string
		m    move
		want int
	}{
		{"in the old member's term", move{at: at(5), ring: "web", object: "p-00", from: "m-a", to: "m-b"}, 1},
		{"after the old member's term", move{at: at(12), ring: "web", object: "p-00", from: "m-a", to: "m-b"}, 0},
		{"a child in the old member's term", move{at: at(5), ring: "web", object: "p-00-web", from: "m-a", to: "m-b", child: true}, 1},
		{"a child after the old member's term", move{at: at(12), ring: "web", object: "p-00-web", from: "m-a", to: "m-b", child: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := violations(w.checkHistory([]move{tc.m})); got["moves only by drain"] != tc.want || len(got) > tc.want {
				t.Fatalf("violations %v, want %d of moves only by drain and nothing else", got, tc.want)
			}
		})
	}
}

// A child assigned to a member while its parent is labelled for another
// member in its term, or let go by the member its parent is still
// labelled for, breaks "children follow parents"; the same assignment
// after that term ended, or of a child whose parent was let go (no
// label), and a let-go of a child whose parent is on another member, do
// not.
func TestAChildAwayFromItsParentsLiveMemberBreaksChildrenFollowParents(t *testing.T) {
	w, at := twoTermsInWeb()
	for _, tc := range []struct {
		name string
		m    move
		want int
	}{
		{"in the parent's member's term", move{at: at(5), ring: "web", object: "p-00-web", to: "m-b", child: true, parentOn: "m-a"}, 1},
		{"after the parent's member's term", move{at: at(12), ring: "web", object: "p-00-web", to: "m-b", child: true, parentOn: "m-a"}, 0},
		{"to the parent's member", move{at: at(5), ring: "web", object: "p-00-web", to: "m-a", child: true, parentOn: "m-a"}, 0},
		{"its parent let go", move{at: at(5), ring: "web", object: "p-00-web", to: "m-b", child: true}, 0},
		{"let go while its parent is on its member", move{at: at(5), ring: "web", object: "p-00-web", from: "m-a", child: true, parentOn: "m-a"}, 1},
		{"let go by a member that ended", move{at: at(12), ring: "web", object: "p-00-web", from: "m-a", child: true, parentOn: "m-a"}, 0},
		{"let go to follow its parent elsewhere", move{at: at(5), ring: "web", object: "p-00-web", from: "m-a", child: true, parentOn: "m-b"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := violations(w.checkHistory([]move{tc.m})); got["children follow parents"] != tc.want || len(got) > tc.want {
				t.Fatalf("violations %v, want %d of children follow parents and nothing else", got, tc.want)
			}
		})
	}
}

// At quiescence, a term's cache that differs from the server, and a
// leading sharder whose cache holds fewer objects than the server (or
// shows no gauge), break "cache equals server"; equal ones do not.
func TestACacheThatDiffersFromTheServerBreaksCacheEqualsServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(Options{Scenario: LeaderElected}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		for i := range 3 {
			if err := w.createParent(t.Context(), parentName(i), 0); err != nil {
				t.Fatal(err)
			}
		}
		server := map[string]string{}
		for _, u := range w.srv.Objects(configMaps) {
			if u.GetNamespace() == Namespace {
				server[u.GetName()] = u.GetResourceVersion()
			}
		}
		cache := map[string]string{}
		r := &replica{name: "r0-0", terms: map[string]*openTerm{
			LeaderRing: {member: "r0-0", selector: labels.Everything(), cache: func() map[string]string { return cache }},
		}, sharders: map[string]*metrics.Memory{}}
		w.replicas[0] = r

		stale := maps.Clone(server)
		stale[parentName(1)] = "1" // an old resourceVersion, and nothing else
		missing := maps.Clone(server)
		delete(missing, parentName(2))
		for _, tc := range []struct {
			name  string
			cache map[string]string
			want  int
		}{
			{"equal", server, 0},
			{"stale", stale, 1},
			{"missing an object", missing, 1},
			{"empty", map[string]string{}, 1},
		} {
			cache = tc.cache
			if got := violations(w.cachesEqualServer()); got["cache equals server"] != tc.want || len(got) > tc.want {
				t.Errorf("a term's cache %s: violations %v, want %d of cache equals server", tc.name, got, tc.want)
			}
		}

		cache = server
		sharder := metrics.NewMemory()
		r.sharders[LeaderRing] = sharder
		if got := violations(w.cachesEqualServer()); got["cache equals server"] != 1 {
			t.Errorf("a leading sharder with no cached-objects gauge: violations %v, want 1", got)
		}
		gauge, err := sharder.Gauge(metrics.Desc{Name: "listwatch_informer_cached_objects", Help: "Objects cached.", Labels: []string{"resource"}}, []string{"configmaps"})
		if err != nil {
			t.Fatal(err)
		}
		gauge.Set(float64(len(server) - 1))
		if got := violations(w.cachesEqualServer()); got["cache equals server"] != 1 {
			t.Errorf("a leading sharder that caches one object too few: violations %v, want 1", got)
		}
		gauge.Set(float64(len(server)))
		if got := violations(w.cachesEqualServer()); len(got) != 0 {
			t.Errorf("a leading sharder that caches every object: violations %v, want none", got)
		}
	})
}

// A run whose controller never reaches its end state breaks "converged"
// once the bound after the last fault has passed.
func TestAControllerThatNeverConvergesBreaksConverged(t *testing.T) {
	res := Check(t, Options{Seed: 1, Scenario: LeaderElected, Faults: 5 * time.Second, Settle: 5 * time.Second,
		Controller: &Controller{
			Run:       func(ctx context.Context, _ Term) { <-ctx.Done() },
			Converged: func(context.Context, *rest.Config) error { return errors.New("never") },
		}}, Schedule{})
	if got := violations(res.Violations); got["converged"] != 1 || res.Converged >= 0 {
		t.Fatalf("converged %v, violations %v: want the run reported as not converged", res.Converged, got)
	}
}

// A term's handler that got an event out of order breaks "handler stream
// consistent" at once; at quiescence, one that was told of other
// objects than its term's cache holds breaks it too.
func TestATermsHandlerToldOutOfOrderOrOfOtherObjectsBreaksHandlerStreamConsistent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := newWorld(Options{Scenario: LeaderElected}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		defer w.admin.Close()
		if err := w.createParent(t.Context(), parentName(0), 0); err != nil {
			t.Fatal(err)
		}
		cached := w.srv.Objects(configMaps)[0]
		cache := map[string]string{cached.GetName(): cached.GetResourceVersion()}
		told := newHandlerStream()
		handler := replay[*corev1.ConfigMap](told, func(wrong string) { w.breakStream("r0-0", LeaderRing, "r0-0", wrong) })
		w.replicas[0] = &replica{name: "r0-0", terms: map[string]*openTerm{
			LeaderRing: {member: "r0-0", selector: labels.Everything(), cache: func() map[string]string { return cache }, told: told.byName},
		}, sharders: map[string]*metrics.Memory{}}

		cm := &corev1.ConfigMap{}
		cm.Namespace, cm.Name, cm.UID, cm.ResourceVersion = cached.GetNamespace(), cached.GetName(), cached.GetUID(), cached.GetResourceVersion()
		handler.OnAdd(cm, true)
		if got := violations(w.cachesEqualServer()); len(got) != 0 {
			t.Fatalf("a handler told of its cache was reported: %v", got)
		}

		handler.OnDelete(cm, false)
		if got := violations(w.cachesEqualServer()); got["handler stream consistent"] != 1 {
			t.Errorf("a handler told of a delete of an object its cache holds: violations %v, want one of handler stream consistent", got)
		}
		handler.OnDelete(cm, false)
		if len(w.streamBroken) != 1 {
			t.Errorf("a second delete of one object: %d broken events, want 1: %v", len(w.streamBroken), w.streamBroken)
		}
	})
}

// A reconcile that reads its parent older than an earlier reconcile of
// the same key wrote it, or finds no child its informer had not yet
// applied the create of, breaks "read your writes", and so does a guard
// that lets a key run stale sooner than MaxHold after its last write;
// the same reads after the guard let the key run stale past MaxHold, in
// another setup, of a parent gone, or of a child gone after the create,
// do not. A reconcile that reads a child of the UID an earlier reconcile
// of its key deleted breaks it too; a child of another UID (made since)
// does not.
func TestAReconcileThatReadsOlderThanItsKeysOwnWriteBreaksReadYourWrites(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, what string, setup uint64, object, version, applied string) Event {
		return Event{At: at(ms), What: what, Replica: "r0-0", Ring: "web", Member: "m-a", Key: "sim/p-01",
			Setup: setup, Object: object, Version: version, Applied: applied}
	}
	// removed is a reconcile of the key deleting its child of uid.
	removed := func(ms int, uid string) Event {
		e := ev(ms, Removed, 1, "p-01-web", "", "")
		e.UID = uid
		return e
	}
	withUID := func(e Event, uid string) Event { e.UID = uid; return e }
	// The first reconcile wrote the parent at 20 and created its child at 21.
	wrote := []Event{
		ev(0, Begin, 1, "", "", ""), ev(1, Read, 1, "p-01", "10", "10"),
		ev(100, Wrote, 1, "p-01", "20", ""), ev(100, Read, 1, "p-01-web", "", "19"),
		ev(101, Wrote, 1, "p-01-web", "21", ""), ev(101, End, 1, "", "", ""),
	}
	for _, tc := range []struct {
		name string
		next []Event // the next reconcile, and what came before it
		want int
	}{
		{"the parent read at its own write", []Event{ev(200, Begin, 1, "", "", ""), ev(200, Read, 1, "p-01", "20", "21"), ev(300, Read, 1, "p-01-web", "21", "21")}, 0},
		{"the parent read older than its own write", []Event{ev(200, Begin, 1, "", "", ""), ev(200, Read, 1, "p-01", "10", "19")}, 1},
		{"the child missing, its create not applied", []Event{ev(200, Begin, 1, "", "", ""), ev(200, Read, 1, "p-01", "20", "20"), ev(300, Read, 1, "p-01-web", "", "20")}, 1},
		{"the child missing after its create was applied", []Event{ev(200, Begin, 1, "", "", ""), ev(200, Read, 1, "p-01", "20", "25"), ev(300, Read, 1, "p-01-web", "", "25")}, 0},
		{"the parent missing", []Event{ev(200, Begin, 1, "", "", ""), ev(200, Read, 1, "p-01", "", "19")}, 0},
		{"the guard let the key run stale after MaxHold", []Event{ev(5200, Stale, 1, "", "", ""), ev(5200, Begin, 1, "", "", ""), ev(5200, Read, 1, "p-01", "10", "19")}, 0},
		{"the guard let the key run stale before MaxHold", []Event{ev(1200, Stale, 1, "", "", ""), ev(1200, Begin, 1, "", "", ""), ev(1200, Read, 1, "p-01", "10", "19")}, 1},
		{"another setup's reconcile", []Event{ev(200, Begin, 2, "", "", ""), ev(200, Read, 2, "p-01", "10", "19")}, 0},
		{"the child read again after this key deleted it", []Event{removed(150, "uid-1"), ev(200, Begin, 1, "", "", ""),
			ev(200, Read, 1, "p-01", "20", "21"), withUID(ev(300, Read, 1, "p-01-web", "21", "21"), "uid-1")}, 1},
		{"a child of another UID read after the delete", []Event{removed(150, "uid-1"), ev(200, Begin, 1, "", "", ""),
			ev(200, Read, 1, "p-01", "20", "25"), withUID(ev(300, Read, 1, "p-01-web", "25", "25"), "uid-2")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: append(append([]Event(nil), wrote...), tc.next...)}}
			if got := violations(w.checkHistory(nil)); got["read your writes"] != tc.want || len(got) > min(tc.want, 1) {
				t.Fatalf("violations %v, want %d of read your writes and nothing else", got, tc.want)
			}
		})
	}
}

// Two members reconciling one key at once break "one reconcile per key",
// unless one of them read a life of the object that was already deleted
// (its cache had not seen the delete) while the other reconciled the
// object created again under its name: sharding promises one object,
// not one name.
func TestAMemberReconcilingADeletedObjectsGhostDoesNotBreakOneReconcilePerKey(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	reconcile := func(ms int, replica, member, read string) []Event {
		return []Event{
			{At: at(ms), What: Begin, Replica: replica, Ring: "web", Member: member, Key: "sim/p-00", Setup: 1},
			{At: at(ms), What: Read, Replica: replica, Ring: "web", Member: member, Key: "sim/p-00", Setup: 1, Object: "p-00", Version: read},
			{At: at(ms + 100), What: End, Replica: replica, Ring: "web", Member: member, Key: "sim/p-00", Setup: 1},
		}
	}
	terms := []Event{
		{At: at(0), What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-a", Fence: 1},
		{At: at(0), What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-b", Fence: 2},
	}
	for _, tc := range []struct {
		name    string
		deleted []Event
		want    int
	}{
		{"the same object, both reconciling it", nil, 1},
		{"one reconciling a ghost of the deleted object", []Event{{At: at(500), What: Deleted, Key: "sim/p-00", Version: "20"}}, 0},
		{"a delete after both began", []Event{{At: at(1050), What: Deleted, Key: "sim/p-00", Version: "20"}}, 1},
		// Neither reconciles the object created again: both hold the
		// life that was deleted, at once, which sharding does not allow.
		{"both reconciling the deleted object's ghost", []Event{{At: at(500), What: Deleted, Key: "sim/p-00", Version: "20"}}, 1},
		// Each reconciles a ghost, but of another life: m-a's cache still
		// holds the first (deleted at 20), m-b's the second, created
		// again for m-b and deleted at 40. No life is held by both.
		{"each reconciling the ghost of another deleted life", []Event{{At: at(500), What: Deleted, Key: "sim/p-00", Version: "20"},
			{At: at(600), What: Deleted, Key: "sim/p-00", Version: "40"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := append(append([]Event(nil), terms...), tc.deleted...)
			events = append(events, reconcile(1000, "r0-0", "m-a", "10")...) // its cache still holds the old life
			second := "30"                                                   // the object created again
			if strings.HasPrefix(tc.name, "both") {
				second = "10"
			}
			events = append(events, reconcile(1001, "r1-0", "m-b", second)...)
			slices.SortStableFunc(events, func(a, b Event) int { return a.At.Compare(b.At) })
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: events}}
			if got := violations(w.checkHistory(nil)); got["one reconcile per key"] != tc.want || len(got) > min(tc.want, 1) {
				t.Fatalf("violations %v, want %d of one reconcile per key and nothing else", got, tc.want)
			}
		})
	}
}

// Leader-elected, a child whose parent is gone breaks "converged" once
// the bound has passed, and a parent created again under the same name
// does not bring the child's parent back: the child's controller
// reference names the UID of the one deleted. A child of the parent
// there now keeps it.
func TestAChildOfADeletedParentWhoseNameWasTakenAgainBreaksConverged(t *testing.T) {
	for _, tc := range []struct {
		name string
		uid  func(parent *corev1.ConfigMap) types.UID
		want int
	}{
		{"the child of the parent there", func(p *corev1.ConfigMap) types.UID { return p.UID }, 0},
		{"the child of the parent of that name deleted before", func(*corev1.ConfigMap) types.UID { return "uid-of-the-deleted-parent" }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w, err := newWorld(Options{Scenario: LeaderElected}.withDefaults())
				if err != nil {
					t.Fatal(err)
				}
				defer w.admin.Close()
				w.replicas[0] = &replica{name: "r0-0", terms: map[string]*openTerm{LeaderRing: {member: "r0-0", selector: labels.Everything()}},
					sharders: map[string]*metrics.Memory{}}
				parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: parentName(0), Labels: map[string]string{"app": "sim"},
					Annotations: map[string]string{ReconciledBy(LeaderRing): "r0-0/0"}}, Data: map[string]string{"tick": "0"}}
				if err := w.core.Post().Namespace(Namespace).Resource("configmaps").Body(parent).Do(t.Context()).Into(parent); err != nil {
					t.Fatal(err)
				}
				yes := true
				child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ChildName(parent.Name, LeaderRing), Labels: map[string]string{"app": "sim"},
					Annotations:     map[string]string{ReconciledBy(LeaderRing): "r0-0/0"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: tc.uid(parent), Controller: &yes}}}}
				if err := w.core.Post().Namespace(Namespace).Resource("configmaps").Body(child).Do(t.Context()).Error(); err != nil {
					t.Fatal(err)
				}
				if got := violations(w.converged()); got["converged"] != tc.want {
					t.Errorf("converged: %v, want %d", w.converged(), tc.want)
				}
			})
		})
	}
}
