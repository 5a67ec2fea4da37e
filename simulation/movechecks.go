package simulation

import (
	"fmt"
	"time"
)

// The checks of how objects move between sharded members, judged
// against the terms the history records: "moves only by drain" and
// "children follow parents" (checkHistory lists them all). A move is
// judged only while the member it leaves is in its term and not paused
// lately (inTerm).

// movesOffLiveMembers: a direct relabel seen while the old member's
// term ran (a member id may hold its Lease before its term starts: its
// acquiring write timed out on its side, yet landed).
func (w *world) movesOffLiveMembers(moves []move, terms []interval) []Violation {
	termOf := termsByMember(terms)
	var out []Violation
	for _, m := range moves {
		if m.from == "" || m.to == "" || m.parentOn != "" {
			continue // an assignment, a let-go, or childrenFollowParents' record
		}
		if m.drainedAt != "" && !w.unlabelledBySharder(m.ring, m.object, m.drainedAt) {
			continue // acknowledged: the member took its label off the drained version
		}
		t, ok := w.inTerm(termOf, m.ring, m.from, m.at)
		if !ok {
			continue
		}
		kind := "object"
		if m.child {
			kind = "child"
		}
		out = append(out, Violation{Invariant: "moves only by drain", At: m.at, Text: fmt.Sprintf("ring %s %s %q moved %s→%s at %s while %s (%s) was in its term until %s",
			m.ring, kind, m.object, m.from, m.to, clock(m.at), m.from, t.replica, clock(t.end))})
	}
	return out
}

// childrenFollowParents: a child assigned to a member while its parent
// is labelled for another, whose term runs (not paused), or moved there
// off a dead member, reached a member its parent had not left; a child
// its member let go while its parent was still labelled for that member
// (draining or not) left before its parent. Either way the parent's
// member may reconcile the parent without it, and create it again
// (docs/16, "Children follow their parent"). The sharder assigns a
// child only to its parent's member, or once the parent was let go (its
// label removed); a member lets a drained child go only after its
// parent, and keeps one whose parent it keeps.
func (w *world) childrenFollowParents(moves []move, terms []interval) []Violation {
	termOf := termsByMember(terms)
	var out []Violation
	for _, m := range moves {
		if m.parentOn == "" || m.parentOn == m.to || (m.to == "" && m.parentOn != m.from) {
			continue // the parent's member, or a let-go of a child whose parent is elsewhere
		}
		t, ok := w.inTerm(termOf, m.ring, m.parentOn, m.at)
		if !ok {
			continue
		}
		what := "moved to " + m.to
		if m.to == "" {
			what = "let go by " + m.from
		}
		out = append(out, Violation{Invariant: "children follow parents", At: m.at, Text: fmt.Sprintf("ring %s child %q %s at %s while its parent was on %s (%s), in its term until %s",
			m.ring, m.object, what, clock(m.at), m.parentOn, t.replica, clock(t.end))})
	}
	return out
}

// termsByMember indexes terms by ring and member; a member id is one
// term's (Member.Run draws a fresh one each term).
func termsByMember(terms []interval) map[string]interval {
	out := map[string]interval{}
	for _, t := range terms {
		out[t.ring+" "+t.member] = t
	}
	return out
}

// inTerm returns member's term in ring if it ran at at, and its replica
// had not been paused in it by then, or not lately (a paused process is
// not fenced: the sharder may rightly move its objects once its Lease
// runs out, so a move from a pause on is judged apart; one before it is
// not, nor one after the member, resumed, would have learnt its Lease
// was taken: pauseCaused).
func (w *world) inTerm(termOf map[string]interval, ring, member string, at time.Time) (interval, bool) {
	t, ok := termOf[ring+" "+member]
	return t, ok && !at.Before(t.start) && at.Before(t.end) && !w.pauseCaused(t, at)
}

// pauseCaused reports whether a pause of t's replica in t could have
// brought about a move off its member at at: one that began by at and
// ended (if it did) no more than a LeaseDuration, on the slowest clock a
// Skew makes, and a request's latency before at. A member whose Lease
// the sharder took over while it was paused learns it by its renew
// deadline after it resumes, within that, and its term ends; one still
// in its term later renewed, which a takeover guarded by the version
// judged cannot outlast
// (TestAPauseDoesNotExcuseAMoveLongAfterTheMemberResumed).
func (w *world) pauseCaused(t interval, at time.Time) bool {
	slot := slotOf(t.replica)
	after := time.Duration(float64(w.opts.Timing.Lease)/(1-maxRateSkew)) + maxLatency + maxWire
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pauses {
		if p.slot == slot && !p.from.After(t.end) && !p.from.After(at) && (p.to.IsZero() || !p.to.Before(t.start) && !at.After(p.to.Add(after))) {
			return true
		}
	}
	return false
}
