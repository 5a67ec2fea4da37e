package simulation

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// interval is one reconcile of one key by one member, or one term of
// one member, on simulated time.
type interval struct {
	replica, ring, member, key string
	start, end                 time.Time
	fence                      uint64
	// read is the resourceVersion of the object a reconcile read from
	// its cache ("" if none was recorded, or it found none).
	read string
}

// checkHistory checks the invariants a history proves or refutes:
//
//   - "one reconcile per key": no two members reconcile one key of one
//     ring at once, unless one of them was paused meanwhile (leader
//     election does not fence a paused process: counted apart), or their
//     terms are the documented case below;
//   - "one leader": no two leader terms overlap, outside pauses and the
//     documented case of a candidate that could not know the deposed
//     leader led;
//   - "fences grow": a term that began after another holds the greater
//     fence;
//   - "moves only by drain": a live member's object, a child as much as
//     a parent, never moves straight to another member (the checker's
//     watch) before the old member's term ended;
//   - "children follow parents": no child is assigned to a member while
//     its parent is labelled for another whose term runs;
//   - "read your writes": see readYourWrites.
func (w *world) checkHistory(moves []move) []Violation {
	events := w.hist.Events()
	end := time.Now()
	stopped := map[string]time.Time{}
	var deletes []time.Time
	for _, e := range events {
		switch {
		case e.What == Stopped:
			stopped[e.Replica] = e.At
		case e.What == FaultEvent && strings.Contains(e.Detail, "delete-"):
			deletes = append(deletes, e.At)
		}
	}
	endOf := func(replica string) time.Time {
		if t, ok := stopped[replica]; ok {
			return t
		}
		return end
	}
	reconciles, terms := w.intervals(events, endOf)
	leaderTerms := filter(terms, func(iv interval) bool { return iv.ring == LeaderRing })
	// Documented: a candidate that could not know the deposed leader led
	// (it never saw the Lease before the delete, or the Lease was put back
	// and deleted again between two of its looks, which found it absent
	// for a LeaseDuration) may create it as soon as it finds it deleted
	// (leaderelection's doc, "A deleted Lease"); its term, and so its
	// reconciles, may overlap the deposed leader's, whose fence is lower.
	// Its looks are recorded by notingLooks (unawareOfHolder).
	// The fresh term begins within the deposed leader's renew deadline of
	// the delete (plus a request's latency): by then the deposed leader
	// has put the Lease back, and a create fails, or its term has ended.
	// A later overlap is a bug. Either may be the deposed one: intervals
	// that begin at one instant come in either order.
	freshAfterDelete := func(a, b interval) bool {
		for _, d := range deletes {
			for _, p := range [][2]interval{{a, b}, {b, a}} {
				deposed, fresh := p[0], p[1]
				if !d.Before(deposed.start) && d.Before(deposed.end) && w.unawareOfHolder(fresh.replica, d, fresh.start) &&
					fresh.start.Before(d.Add(w.opts.Timing.Renew+maxLatency+maxWire)) {
					return true
				}
			}
		}
		return false
	}
	termOf := func(r interval) (interval, bool) {
		for _, t := range leaderTerms {
			if t.member == r.member && !r.start.Before(t.start) && !r.start.After(t.end) {
				return t, true
			}
		}
		return interval{}, false
	}
	// Sharding promises one reconcile of one object at a time, not of one
	// name: a member whose cache has not yet seen an object's delete
	// (its watch lags) may still reconcile it while the object created
	// again under its name is reconciled by its new owner. A reconcile
	// that read its object at a version older than a delete of that key
	// the checker saw by the time the other one began (before it began
	// itself, or while it ran: a slow reconcile of an object deleted
	// meanwhile, TestAReconcileOfAnObjectDeletedWhileItRunsOverlapsItsSuccessorsLife)
	// reconciled such a ghost. The two must not hold one life: two
	// reconciles of one deleted life at once are the overlap the
	// invariant forbids, the object having been held by both members;
	// two ghosts of two lives (each member's cache behind by another
	// delete) are not
	// (TestAMemberReconcilingADeletedObjectsGhostDoesNotBreakOneReconcilePerKey).
	// ghost names the life iv read by the resourceVersion of its delete,
	// the first one after its read ("": none seen by by, the life there
	// now).
	ghost := func(iv interval, by time.Time) string {
		for _, e := range events {
			if e.At.After(by) {
				break
			}
			if e.What == Deleted && e.Key == iv.key && iv.read != "" && rvBefore(iv.read, e.Version) {
				return e.Version
			}
		}
		return ""
	}
	var out []Violation
	out = append(out, w.overlaps(reconciles, "one reconcile per key", func(a, b interval) bool {
		ta, okA := termOf(a)
		tb, okB := termOf(b)
		later := a.start
		if b.start.After(later) {
			later = b.start
		}
		// One ghost beside a reconcile of what is there now, or ghosts
		// of two lives; two ghosts of one life are two members holding
		// it at once.
		return a.ring == LeaderRing && okA && okB && freshAfterDelete(ta, tb) || ghost(a, later) != ghost(b, later)
	})...)
	out = append(out, begunTwice(events)...)
	out = append(out, lostOnlyToOthers(events)...)
	out = append(out, w.overlaps(leaderTerms, "one leader", freshAfterDelete)...)
	out = append(out, fencesGrow(terms)...)
	out = append(out, w.movesOffLiveMembers(moves, terms)...)
	out = append(out, w.childrenFollowParents(moves, terms)...)
	out = append(out, w.readYourWrites(events).violations...)
	return out
}

// begunTwice: a reconcile of a key begun by a member whose earlier
// reconcile of that key has not ended. One workqueue never hands out a
// key twice at once, so two workqueues of one member did: in the
// leader-elected scenario, whose terms of one replica share its name as
// their member, a term's workers left running into the replica's next
// term (TestAReconcileOfALeadersEarlierTermOverlappingItsNextTermsBreaksOneReconcilePerKey).
// overlaps judges only two members.
func begunTwice(events []Event) []Violation {
	type k struct{ ring, member, key string }
	open := map[k][]time.Time{}
	var out []Violation
	for _, e := range events {
		at := k{e.Ring, e.Member, e.Key}
		switch e.What {
		case Begin:
			if len(open[at]) > 0 {
				out = append(out, Violation{Invariant: "one reconcile per key", At: e.At, Text: fmt.Sprintf("ring %s key %q: %s (%s) began it at %s while its reconcile begun at %s had not ended",
					e.Ring, e.Key, e.Member, e.Replica, clock(e.At), clock(open[at][0]))})
			}
			open[at] = append(open[at], e.At)
		case End:
			if len(open[at]) > 0 {
				open[at] = open[at][1:]
			}
		}
	}
	return out
}

// intervals pairs begin/end and term-start/term-end events. A term ends
// at the earlier of its work's return and its renew deadline; an
// interval left open ends when its replica stopped (or the run did).
func (w *world) intervals(events []Event, endOf func(string) time.Time) (reconciles, terms []interval) {
	type k struct{ what, ring, member, key string }
	open := map[k]Event{}
	read := map[k]string{} // a reconcile's first read of its own object
	for _, e := range events {
		switch e.What {
		case Read:
			if o := (k{Begin, e.Ring, e.Member, e.Key}); strings.HasSuffix(e.Key, "/"+e.Object) {
				if _, done := read[o]; !done {
					read[o] = e.Version
				}
			}
		case Begin, TermStart:
			open[k{e.What, e.Ring, e.Member, e.Key}] = e
			delete(read, k{e.What, e.Ring, e.Member, e.Key})
		case End, TermEnd:
			what := Begin
			if e.What == TermEnd {
				what = TermStart
			}
			b, ok := open[k{what, e.Ring, e.Member, e.Key}]
			if !ok {
				continue
			}
			delete(open, k{what, e.Ring, e.Member, e.Key})
			iv := interval{replica: e.Replica, ring: e.Ring, member: e.Member, key: e.Key, start: b.At, end: e.At, fence: b.Fence,
				read: read[k{what, e.Ring, e.Member, e.Key}]}
			if e.What == TermEnd {
				if !e.Deadline.IsZero() && e.Deadline.Before(iv.end) {
					iv.end = e.Deadline
				}
				terms = append(terms, iv)
			} else {
				reconciles = append(reconciles, iv)
			}
		}
	}
	for key, b := range open {
		iv := interval{replica: b.Replica, ring: b.Ring, member: b.Member, key: b.Key, start: b.At, end: endOf(b.Replica), fence: b.Fence}
		if key.what == TermStart {
			terms = append(terms, iv)
		} else {
			reconciles = append(reconciles, iv)
		}
	}
	byStart := func(s []interval) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].start.Before(s[j].start) })
	}
	byStart(reconciles)
	byStart(terms)
	return reconciles, terms
}

// overlaps finds intervals of one ring and key, of two members, that
// overlap in time. Those where either replica had been paused in its
// interval by the moment the overlap began, or that excused allows, are
// not violations.
func (w *world) overlaps(all []interval, invariant string, excused func(a, b interval) bool) []Violation {
	byKey := map[string][]interval{}
	for _, iv := range all {
		byKey[iv.ring+" "+iv.key] = append(byKey[iv.ring+" "+iv.key], iv)
	}
	var out []Violation
	for _, ivs := range byKey {
		for i, a := range ivs {
			for _, b := range ivs[i+1:] {
				if !b.start.Before(a.end) {
					break
				}
				// A pause excuses an overlap only if it began by the
				// time the overlap did: one that came later cannot have
				// brought it about.
				if a.member == b.member || w.pausedBy(a, b.start) || w.pausedBy(b, b.start) || (excused != nil && excused(a, b)) {
					continue
				}
				out = append(out, Violation{Invariant: invariant, At: b.start, Text: fmt.Sprintf("ring %s key %q: %s (%s) %s–%s and %s (%s) %s–%s",
					a.ring, a.key, a.member, a.replica, clock(a.start), clock(a.end), b.member, b.replica, clock(b.start), clock(b.end))})
			}
		}
	}
	return out
}

// paused reports whether iv's replica was paused at any moment of it.
func (w *world) paused(iv interval) bool { return w.pausedBy(iv, iv.end) }

// pausedBy reports whether iv's replica was paused at a moment of iv no
// later than at: a pause that began after at excuses nothing at at.
func (w *world) pausedBy(iv interval, at time.Time) bool {
	slot := slotOf(iv.replica)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pauses {
		to := p.to
		if to.IsZero() {
			to = iv.end
		}
		if p.slot == slot && !p.from.After(iv.end) && !p.from.After(at) && !to.Before(iv.start) {
			return true
		}
	}
	return false
}

// slotOf is the slot of replica "r<slot>-<gen>".
func slotOf(replica string) int {
	s, _, _ := strings.Cut(strings.TrimPrefix(replica, "r"), "-")
	n, _ := strconv.Atoi(s)
	return n
}

// fencesGrow: a term that began strictly after another (events at one
// simulated instant have no order) holds a greater fence, and every
// fence is set.
func fencesGrow(terms []interval) []Violation {
	var out []Violation
	var prev []interval
	for _, t := range terms {
		if t.fence == 0 {
			out = append(out, Violation{Invariant: "fences grow", At: t.start, Text: fmt.Sprintf("%s's term in %s has no fence", t.member, t.ring)})
		}
		for _, p := range prev {
			if p.start.Before(t.start) && p.fence >= t.fence {
				out = append(out, Violation{Invariant: "fences grow", At: t.start, Text: fmt.Sprintf("%s's term in %s began %s with fence %d, after %s's in %s began %s with fence %d",
					t.member, t.ring, clock(t.start), t.fence, p.member, p.ring, clock(p.start), p.fence)})
			}
		}
		prev = append(prev, t)
	}
	return out
}

func filter(s []interval, keep func(interval) bool) []interval {
	var out []interval
	for _, iv := range s {
		if keep(iv) {
			out = append(out, iv)
		}
	}
	return out
}

func clock(t time.Time) string { return t.Format("15:04:05.000") }
