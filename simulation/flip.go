package simulation

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// A flip is a CRD moved to another version and back within moments:
// a MoveCRD fault with a Back count (NewCRDSchedule). Its machinery is
// here: it is armed (startFlip), ends at a discovery request or after
// its For (flipDiscovery, moveCRDBack), and records the discovery
// answers it may have misled (misledTwice judges them).

// startFlip arms the flip of a move from from to to: the CRD moves back
// just before the back'th discovery request any replica makes from now
// (flipDiscovery), or after its For (moveCRDBack), whichever comes first.
// It returns the flip's id, which moveCRDBack takes.
func (w *world) startFlip(from, to string, back int) (id int) {
	w.crd.mu.Lock()
	defer w.crd.mu.Unlock()
	w.crd.flips++
	w.crd.flip.from, w.crd.flip.to, w.crd.flip.left, w.crd.flip.id = from, to, back, w.crd.flips
	return w.crd.flips
}

// flipDiscovery is next with a flip's trigger in front: a discovery
// request of the CRD's group counts down the flip under way, and the one
// that ends the count is served after the CRD moved back. Discovery
// answers a served check from several requests, and a flip between them
// is the case one look cannot tell from a deletion. Each such request
// of replica's but the trigger, which is served after the move back and
// reads no flip (TestTheRequestThatEndsAFlipIsNoAnswerTheFlipMisled),
// is recorded as one a flip may have misled (misledTwice), and so is one
// during which a flip started:
// the move may have come before the server answered it
// (TestADiscoveryAnswerOfAFlipThatStartedWhileItWasOnItsWayIsRecorded).
// A request recorded under two flips, both ways, is still one answer:
// each record names its request
// (TestOneDiscoveryRequestThatMetTwoFlipsIsOneAnswer).
func (w *world) flipDiscovery(replica string, next http.Handler) http.Handler {
	if w.crd == nil {
		return next // not the custom resources scenario
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !isCRDDiscovery(r) {
			next.ServeHTTP(rw, r)
			return
		}
		w.crd.mu.Lock()
		w.crd.requests++
		f, flips, request := &w.crd.flip, w.crd.flips, w.crd.requests
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				w.moveCRDBackLocked(f.from, f.to) // the trigger reads the CRD moved back
			} else {
				w.crd.misled[replica] = append(w.crd.misled[replica], misledAnswer{flip: f.id, request: request, at: time.Now()})
			}
		}
		w.crd.mu.Unlock()
		next.ServeHTTP(rw, r)
		// A flip that started while the request was on its way to the
		// server may have moved the CRD before it was served.
		w.crd.mu.Lock()
		if w.crd.flips != flips {
			w.crd.misled[replica] = append(w.crd.misled[replica], misledAnswer{flip: w.crd.flips, request: request, at: time.Now()})
		}
		w.crd.mu.Unlock()
	})
}

// isCRDDiscovery reports whether r asks discovery for the list of groups
// or for the resources of a version of the CRD's group.
func isCRDDiscovery(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	if r.URL.Path == "/apis" {
		return true
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/apis/"+CRDGroup+"/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// moveCRDBack ends flip id after its For: the CRD moves back to from, if
// it is still at to (a fault since may have removed or moved it, or the
// flip's discovery request moved it back first). A later flip under way
// is left armed
// (TestAFlipsForEndingLeavesALaterFlipUnderWay), and its move standing:
// the CRD at to is then that flip's to move back
// (TestAFlipsForEndingLeavesALaterFlipsMoveStanding).
func (w *world) moveCRDBack(id int, from, to string) {
	w.crd.mu.Lock()
	defer w.crd.mu.Unlock()
	if w.crd.flip.id != id && w.crd.flip.left > 0 {
		return // a later flip is under way
	}
	w.crd.flip.left = 0
	w.moveCRDBackLocked(from, to)
}

// moveCRDBackLocked moves the CRD back to from, if it is at to. The
// caller holds w.crd.mu.
func (w *world) moveCRDBackLocked(from, to string) {
	if w.crd.version != to {
		return
	}
	w.hist.add(Event{What: FaultEvent, Detail: fmt.Sprintf("move-crd %s back to %s", to, from)})
	if err := w.srv.MoveCRD(widgets, from); err != nil {
		w.log.Error("simulation: move the CRD back", "err", err)
		return
	}
	w.crd.version, w.crd.since = from, time.Now()
}
