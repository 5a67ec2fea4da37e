package replicas

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// faultKind is one kind of fault the schedule injects.
type faultKind string

const (
	kill               faultKind = "kill"                 // SIGKILL a replica, then start a new one in its place
	pause              faultKind = "pause"                // SIGSTOP a replica past LeaseDuration, then SIGCONT
	blackhole          faultKind = "blackhole"            // its proxy holds every byte past LeaseDuration, then heals
	deleteMemberLease  faultKind = "delete-member-lease"  // the admin deletes a live member's Lease
	deleteSharderLease faultKind = "delete-sharder-lease" // the admin deletes the elected sharder's Lease
	killSharder        faultKind = "kill-sharder"         // a join, and at the first drain after it, SIGKILL of the ring's sharder (then a new replica)
	join               faultKind = "join"                 // a new replica
	leave              faultKind = "leave"                // a replica stops gracefully (SIGTERM)
	forbid             faultKind = "forbid"               // the replicas' ConfigMap permissions are gone for a while: 403
)

// allKinds is every kind, in the order the tables list them.
var allKinds = []faultKind{kill, pause, blackhole, deleteMemberLease, deleteSharderLease, killSharder, join, leave, forbid}

// The number of replicas stays within these: at least two, so a pause
// leaves someone to take over; at most five, the spec's ceiling.
const minReplicas, maxReplicas, startReplicas = 2, 5, 3

// fault is one step of a schedule. Which replica, Lease or ring it hits
// is chosen when it runs (pick modulo what is eligible then), since the
// set of replicas depends on what happened before.
type fault struct {
	kind faultKind
	gap  time.Duration // the wait before it
	hold time.Duration // pause, blackhole, forbid: how long the fault lasts
	pick int           // chooses the target
	ring int           // kill-sharder: which ring's sharder
}

func (f fault) String() string {
	s := fmt.Sprintf("+%v %s", f.gap, f.kind)
	if f.hold > 0 {
		s += fmt.Sprintf(" for %v", f.hold)
	}
	if f.kind == killSharder {
		s += " of " + rings[f.ring]
	}
	return s
}

// newSchedule returns the faults for seed: every kind once, in an order
// the seed chooses, then more of random kinds until their estimated
// length reaches duration. The same seed and duration give the same
// schedule. Holds last past LeaseDuration, so each pause and partition
// ends a term.
func newSchedule(seed uint64, duration time.Duration, t timing) []fault {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var kinds []faultKind
	for _, i := range rng.Perm(len(allKinds)) {
		kinds = append(kinds, allKinds[i])
	}
	var out []fault
	replicas := startReplicas
	var length time.Duration
	for i := 0; i < len(kinds) || length < duration; i++ {
		kind := faultKind("")
		if i < len(kinds) {
			kind = kinds[i]
		} else {
			kind = allKinds[rng.IntN(len(allKinds))]
		}
		// Keep the number of replicas within bounds, deterministically.
		switch {
		case (kind == join || kind == killSharder) && replicas >= maxReplicas:
			kind = leave
		case kind == leave && replicas <= minReplicas:
			kind = join
		}
		switch kind {
		case join, killSharder:
			replicas++
		case leave:
			replicas--
		}
		// 1 to 2.5 s before each fault: no fault waits for the last to
		// settle (a kill's takeover alone takes a LeaseDuration and more),
		// and nothing is judged between faults: every check reads the
		// whole run, and the convergence bound starts at the last fault.
		f := fault{kind: kind, gap: time.Duration(1000+rng.IntN(1500)) * time.Millisecond, pick: rng.IntN(1 << 16), ring: rng.IntN(len(rings))}
		switch kind {
		case pause, blackhole:
			f.hold = t.Lease + time.Second + time.Duration(rng.IntN(2000))*time.Millisecond
		case forbid:
			f.hold = t.Lease + time.Duration(rng.IntN(2000))*time.Millisecond
		}
		f.gap, f.hold = f.gap.Round(100*time.Millisecond), f.hold.Round(100*time.Millisecond)
		out = append(out, f)
		length += f.gap + f.hold + time.Second // about a second for the fault's own steps
	}
	return out
}

// describe is the schedule on one line per fault, for the log.
func describe(schedule []fault) string {
	var b strings.Builder
	for i, f := range schedule {
		fmt.Fprintf(&b, "  %2d. %v\n", i+1, f)
	}
	return b.String()
}
