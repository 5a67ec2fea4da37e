package simulation

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	si "github.com/listwatch/informer/sharedinformer"
)

// A delete, final state unknown, of a Widget the server holds is
// excused from "no delete of a live object" only when its replica's
// discovery answers were served during two different flips within
// misledWindow before it: one flip, another replica's flips, flips too
// long ago, or a delete whose final state is known still break it.
func TestALiveWidgetDeletedAfterTwoFlipsMisledItsReplicasLooksIsExcusedAndNothingElse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		live := w.srv.Objects(widgetsGVR())[0]
		flipAnswers := func(replica string) { // one flip, one discovery answer of replica's during it, not its trigger
			id := w.startFlip("v2", "v1", 2) // its move back, if any, keeps the Widgets
			w.flipDiscovery(replica, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).
				ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/apis", nil))
			w.moveCRDBack(id, "v2", "v1")
		}
		violations := func() int { return crdViolations(w)["no delete of a live object"] }

		flipAnswers("r9-0")
		flipAnswers("r9-0")
		handler.OnDelete(live, true)
		if got := violations(); got != 1 {
			t.Fatalf("another replica's two misled looks excused the delete: %d violations, want 1", got)
		}
		flipAnswers(fo.replica.name)
		handler.OnDelete(live, true)
		if got := violations(); got != 2 {
			t.Fatalf("one flip excused the delete: %d violations, want 2", got)
		}
		time.Sleep(time.Second)
		flipAnswers(fo.replica.name)
		handler.OnDelete(live, true)
		if got := violations(); got != 2 || w.crd.coverage()[caseMisledTwice] != 1 {
			t.Fatalf("two flips: %d violations, want 2; excused %d times, want 1", got, w.crd.coverage()[caseMisledTwice])
		}
		handler.OnDelete(live, false)
		if got := violations(); got != 3 {
			t.Fatalf("a delete whose final state is known was excused: %d violations, want 3", got)
		}
		time.Sleep(misledWindow + time.Millisecond)
		flipAnswers(fo.replica.name)
		handler.OnDelete(live, true)
		if got := violations(); got != 4 {
			t.Fatalf("a flip older than misledWindow counted: %d violations, want 4", got)
		}
	})
}

// A discovery request a replica sent before a flip started, served by
// the server after the CRD moved, read the flip as surely as one sent
// after: it is recorded as an answer of that flip's. Two flips, each
// reaching one look that way or the other, excuse the delete the second
// "gone" brings.
func TestADiscoveryAnswerOfAFlipThatStartedWhileItWasOnItsWayIsRecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		live := w.srv.Objects(widgetsGVR())[0]
		look := func(next http.Handler) int { // one discovery request of the replica's, for the version it reads
			rec := httptest.NewRecorder()
			w.flipDiscovery(fo.replica.name, next).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/"+CRDGroup+"/v1", nil))
			return rec.Code
		}
		flip := func() int { // v1 to v2, back at the second discovery request
			if from := w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"}); from != "v1" {
				t.Fatalf("the CRD moved from %q, want v1", from)
			}
			return w.startFlip("v1", "v2", 2)
		}

		first := flip()
		if got := look(w.srv); got != http.StatusNotFound {
			t.Fatalf("the first look's request during the first flip: %d, want 404", got)
		}
		w.moveCRDBack(first, "v1", "v2")
		time.Sleep(800 * time.Millisecond) // BackoffInitial: the second look
		got := look(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			flip() // the second flip starts while the request is on its way to the server
			w.srv.ServeHTTP(rw, r)
		}))
		if got != http.StatusNotFound {
			t.Fatalf("the second look's request during the second flip: %d, want 404", got)
		}
		handler.OnDelete(live, true)
		if got := crdViolations(w)["no delete of a live object"]; got != 0 {
			t.Fatalf("both looks read a flip, yet the delete broke the invariant %d times: %v", got, w.crd.violations)
		}
	})
}

// Two flips at one instant, the second moving the CRD back to where the
// first found it (v1 to v2, then v2 to v1, each to flip back): the
// first's For ending moves nothing back (the CRD is not at v2), and must
// not end the second, still under way, whose discovery answers are
// still recorded until it moves back itself.
func TestAFlipsForEndingLeavesALaterFlipUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"})
		first := w.startFlip("v1", "v2", 3)
		w.applyCRD(Fault{Kind: MoveCRD, Version: "v1"})
		w.startFlip("v2", "v1", 3)
		w.moveCRDBack(first, "v1", "v2") // the first flip's For ends
		w.flipDiscovery(fo.replica.name, w.srv).
			ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/apis", nil))
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		if got := w.crd.misled[fo.replica.name]; len(got) != 1 || got[0].flip != 2 {
			t.Fatalf("a discovery answer served while the second flip held the CRD at v1: recorded %+v, want one of flip 2", got)
		}
	})
}

// The discovery request that ends a flip is served after the CRD moved
// back: it reads the CRD as it was before the flip, and a look it is in
// read that flip only through an earlier request, recorded already. So
// it is no answer the flip misled: a flip whose trigger is the one
// request of the replica's it reached, and another that misled one
// look, do not excuse a delete that only one look said "gone" for.
func TestTheRequestThatEndsAFlipIsNoAnswerTheFlipMisled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		live := w.srv.Objects(widgetsGVR())[0]
		look := func() int { // one discovery request of the replica's, for the version it reads
			rec := httptest.NewRecorder()
			w.flipDiscovery(fo.replica.name, w.srv).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/"+CRDGroup+"/v1", nil))
			return rec.Code
		}
		flip := func(back int) int { // v1 to v2
			if from := w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"}); from != "v1" {
				t.Fatalf("the CRD moved from %q, want v1", from)
			}
			return w.startFlip("v1", "v2", back)
		}

		first := flip(2)
		if got := look(); got != http.StatusNotFound {
			t.Fatalf("a request during the first flip: %d, want 404", got)
		}
		w.moveCRDBack(first, "v1", "v2")
		time.Sleep(800 * time.Millisecond)
		flip(1)
		if got := look(); got != http.StatusOK {
			t.Fatalf("the request that ends the second flip: %d, want 200 (served after the move back)", got)
		}
		handler.OnDelete(live, true)
		if got := crdViolations(w)["no delete of a live object"]; got != 1 {
			t.Fatalf("one look misled, yet the delete broke the invariant %d times, want 1 (excused %d times)", got, w.crd.coverage()[caseMisledTwice])
		}
	})
}

// One discovery request is one answer, to one look, whatever flips it
// met: a request that reached flipDiscovery during one flip and saw
// another start before it left answered one look, and a flip can
// mislead a look only through an answer. So it does not, alone, excuse
// a delete: that is the one look a one-look library would believe.
func TestOneDiscoveryRequestThatMetTwoFlipsIsOneAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		handler := fo.handler(w, &hold{inf: &si.Informer[*unstructured.Unstructured]{}})
		live := w.srv.Objects(widgetsGVR())[0]
		if from := w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"}); from != "v1" {
			t.Fatalf("the CRD moved from %q, want v1", from)
		}
		w.startFlip("v1", "v2", 3) // the first flip, under way as the request arrives
		rec := httptest.NewRecorder()
		w.flipDiscovery(fo.replica.name, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			w.srv.ServeHTTP(rw, r)
			// A second flip, at the same 100 ms instant, starts as the
			// answer goes back.
			if from := w.applyCRD(Fault{Kind: MoveCRD, Version: "v1"}); from != "v2" {
				t.Fatalf("the CRD moved from %q, want v2", from)
			}
			w.startFlip("v2", "v1", 3)
		})).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/"+CRDGroup+"/v1", nil))
		if rec.Code != http.StatusNotFound {
			t.Fatalf("the request during the first flip: %d, want 404", rec.Code)
		}
		handler.OnDelete(live, true)
		if got := crdViolations(w)["no delete of a live object"]; got != 1 {
			t.Fatalf("one discovery answer excused the delete: %d violations, want 1 (excused %d times)", got, w.crd.coverage()[caseMisledTwice])
		}
	})
}

// Two flips to v2 at one 100 ms instant, the first ended by its trigger
// before the second moved the CRD: the first's For ending finds the CRD
// at v2, but by the second's move, which is the second's to undo. Moved
// back then, the second, still armed, would have its discovery answers
// recorded as misled though they read the CRD unmoved. An answer
// recorded as one a flip misled is served while the flip holds the CRD
// moved.
func TestAFlipsForEndingLeavesALaterFlipsMoveStanding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, fo := crdWorldForTest(t)
		look := func() int {
			rec := httptest.NewRecorder()
			w.flipDiscovery(fo.replica.name, w.srv).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/apis/"+CRDGroup+"/v1", nil))
			return rec.Code
		}
		w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"})
		first := w.startFlip("v1", "v2", 1)
		if got := look(); got != http.StatusOK {
			t.Fatalf("the first flip's trigger: %d, want 200 (served after the move back)", got)
		}
		if from := w.applyCRD(Fault{Kind: MoveCRD, Version: "v2"}); from != "v1" {
			t.Fatalf("the second flip moved the CRD from %q, want v1", from)
		}
		w.startFlip("v1", "v2", 3)
		w.moveCRDBack(first, "v1", "v2") // the first flip's For ends
		got := look()
		w.crd.mu.Lock()
		defer w.crd.mu.Unlock()
		if n := len(w.crd.misled[fo.replica.name]); n != 1 || got != http.StatusNotFound {
			t.Fatalf("a discovery request while the second flip is under way: %d, want 404 (the second flip's move), recorded %d times as misled", got, n)
		}
	})
}
