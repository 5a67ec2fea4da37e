package simulation

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	informer "github.com/listwatch/informer"
)

// readYourWrites checks "read your writes" (package readyourwrites'
// promise): within one setup of a term's controller (one guard), a
// reconcile of a key never reads its cache older than a write that an
// earlier reconcile of the key made and saw answered, unless the guard
// let the key run past MaxHold (a Stale event, which the guard counts);
// and a key runs stale only once it has been held for MaxHold, by its
// replica's clock. A hold begins after the reconcile that wrote, so a
// stale run comes at least MaxHold after the key's last write (a skewed
// clock runs at most maxRateSkew fast; a pause excuses nothing: a paused
// replica's wall clock runs on and its timers wait for the resume, so a
// pause only makes a stale run later).
// With a fixed child name a read that misses the reconcile's own child
// ends in an AlreadyExists; with generateName it would be a second child:
// this is the simulator's "nothing created twice".
//
// What a read proves:
//   - an object read at a resourceVersion older than the write's: the
//     cache had not applied the write;
//   - the child read as absent while its informer had applied less than
//     the write: likewise (an object that left the cache later, deleted
//     or moved to another member, left at a greater resourceVersion, and
//     the informer applies that before it reads as absent, since the
//     child is read after the reconcile's work, long after its hold).
//
// A parent read as absent proves nothing: it is read right after the
// hold, and a cache may show a delete that came just after the write
// before its informer reports having applied either.
func (w *world) readYourWrites(events []Event) guardChecks {
	type scope struct {
		setup uint64
		key   string
	}
	written := map[scope]map[string]string{} // by object, the newest version answered
	due := map[scope]map[string]string{}     // what the running reconcile must see
	removed := map[scope]map[string]string{} // by object, the UID a reconcile deleted
	gone := map[scope]map[string]string{}    // what the running reconcile must not see
	lastWrote := map[scope]time.Time{}       // a stale run waits MaxHold after it
	maxHold := float64(guardMaxHold)
	shortest := time.Duration(maxHold / (1 + maxRateSkew)) // a clock running fast times MaxHold this soon
	var out guardChecks
	for _, e := range events {
		if e.Setup == 0 {
			continue
		}
		s := scope{e.Setup, e.Key}
		switch e.What {
		case Stale:
			delete(written, s)
			delete(removed, s)
			out.stale++
			wrote, ok := lastWrote[s]
			if ok && e.At.Sub(wrote) < shortest {
				out.violations = append(out.violations, Violation{Invariant: "read your writes", At: e.At, Text: fmt.Sprintf(
					"%s's guard let %s in %s (setup %d) run stale %v after its last write, before MaxHold (%v)",
					e.Member, e.Key, e.Ring, e.Setup, e.At.Sub(wrote), guardMaxHold)})
			}
		case Begin:
			due[s] = maps.Clone(written[s])
			gone[s] = maps.Clone(removed[s])
		case Removed:
			lastWrote[s] = e.At
			if removed[s] == nil {
				removed[s] = map[string]string{}
			}
			removed[s][e.Object] = e.UID
		case Wrote:
			lastWrote[s] = e.At
			if written[s] == nil {
				written[s] = map[string]string{}
			}
			if old, ok := written[s][e.Object]; !ok || rvBefore(old, e.Version) {
				written[s][e.Object] = e.Version
			}
		case Read:
			if uid, ok := gone[s][e.Object]; ok {
				out.judgedRemoved++
				if e.UID == uid {
					out.violations = append(out.violations, Violation{Invariant: "read your writes", At: e.At, Text: fmt.Sprintf(
						"%s's reconcile of %s in %s (setup %d) read %s of UID %s at resourceVersion %s, which an earlier reconcile deleted",
						e.Member, e.Key, e.Ring, e.Setup, e.Object, e.UID, e.Version)})
				}
			}
			rv, ok := due[s][e.Object]
			if !ok {
				continue
			}
			key, err := informer.ParseKey(e.Key)
			parent := err == nil && key.Name == e.Object
			out.judged++
			switch {
			case e.Version != "" && rvBefore(e.Version, rv):
				out.violations = append(out.violations, Violation{Invariant: "read your writes", At: e.At, Text: fmt.Sprintf(
					"%s's reconcile of %s in %s (setup %d) read %s at resourceVersion %s; an earlier reconcile wrote it at %s",
					e.Member, e.Key, e.Ring, e.Setup, e.Object, e.Version, rv)})
			case e.Version == "" && !parent && rvBefore(e.Applied, rv):
				out.violations = append(out.violations, Violation{Invariant: "read your writes", At: e.At, Text: fmt.Sprintf(
					"%s's reconcile of %s in %s (setup %d) found no %s (its informer had applied %s); an earlier reconcile wrote it at %s",
					e.Member, e.Key, e.Ring, e.Setup, e.Object, e.Applied, rv)})
			}
		}
	}
	return out
}

// guardChecks is what readYourWrites found: the violations, and how
// many reads it judged against their key's own writes and stale runs
// against MaxHold (a sweep's coverage: a clause no run reaches checks
// nothing).
type guardChecks struct {
	violations                   []Violation
	judged, judgedRemoved, stale int
}

// coverage is the checks' counts as Result.Coverage cases.
func (g guardChecks) coverage() map[string]int {
	return map[string]int{caseReadOwnWrite: g.judged, caseReadOwnDelete: g.judgedRemoved, caseStaleRun: g.stale}
}

// The cases of "read your writes" a sweep counts.
const (
	caseReadOwnWrite  = "a read judged against its key's own write (read your writes)"
	caseStaleRun      = "a stale run judged against MaxHold (read your writes)"
	caseReadOwnDelete = "a read judged against its key's own delete (read your writes)"
)

// guardMaxHold is the MaxHold of the guards of the terms' controllers:
// readyourwrites' default.
const guardMaxHold = 5 * time.Second

// rvBefore reports whether resourceVersion a is older than b. The fake
// server's are integers, ordered across a resource (KEP-5504); "" (an
// informer that has applied nothing) is older than any.
func rvBefore(a, b string) bool {
	y, err := strconv.ParseUint(b, 10, 64)
	if err != nil {
		return false
	}
	if a == "" {
		return true
	}
	x, err := strconv.ParseUint(a, 10, 64)
	return err == nil && x < y
}
