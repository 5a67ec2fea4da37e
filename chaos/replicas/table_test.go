package replicas

import (
	"fmt"
	"strings"
	"time"
)

// result is what one seed's run found.
type result struct {
	seed              uint64
	faults            map[faultKind]int
	overlapsOther     int // two members reconciled one key at once, neither paused: must be 0
	overlapsPaused    int // ... one of them SIGSTOPped during its reconcile: reported
	moves             int // direct relabels, from one member straight to another
	movesLiveParents  int // ... of a parent whose old member's term had not ended: must be 0
	movesLiveChildren int // ... of a child whose old member's term had not ended: must be 0
	late              lateWrites
	converged         time.Duration // from the end of the last fault
	bound             time.Duration
	notConverged      bool
	objects           objectCount
	failures          []string
}

func (r *result) fail(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// table is one run's result as a markdown table.
func (r result) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| seed %d | |\n|---|---|\n", r.seed)
	for _, k := range allKinds {
		fmt.Fprintf(&b, "| fault: %s | %d |\n", k, r.faults[k])
	}
	fmt.Fprintf(&b, "| overlapping reconciles, neither paused (must be 0) | %d |\n", r.overlapsOther)
	fmt.Fprintf(&b, "| overlapping reconciles, one paused (SIGSTOP: not fenced) | %d |\n", r.overlapsPaused)
	fmt.Fprintf(&b, "| direct relabels (no drain) | %d |\n", r.moves)
	fmt.Fprintf(&b, "| direct relabels off a member still in its term: parents / children (must be 0) | %d / %d |\n", r.movesLiveParents, r.movesLiveChildren)
	fmt.Fprintf(&b, "| late writes refused (409) | %d |\n", r.late.refused)
	fmt.Fprintf(&b, "| late writes accepted while another member held the key (must be 0) | %d |\n", r.late.acceptedHeld)
	fmt.Fprintf(&b, "| late writes accepted, nobody else held the key | %d |\n", r.late.acceptedFree)
	fmt.Fprintf(&b, "| late writes that failed otherwise (403, timeout) | %d |\n", r.late.otherwise)
	fmt.Fprintf(&b, "| converged after the last fault (bound) | %s |\n", r.convergence())
	fmt.Fprintf(&b, "| objects at the end: parents, children | %d, %d |\n", r.objects.parents, r.objects.children)
	fmt.Fprintf(&b, "| objects lost, present though deleted, created twice (must be 0) | %d, %d, %d |\n",
		len(r.objects.lost), len(r.objects.extra), len(r.objects.twice))
	return b.String()
}

func (r result) convergence() string {
	took := r.converged.Round(100 * time.Millisecond).String()
	if r.notConverged {
		took = "**not** within " + r.bound.Round(time.Second).String()
	}
	return fmt.Sprintf("%s (%v)", took, r.bound.Round(time.Second))
}

// summary is many runs, one row each, as a markdown table.
func summary(results []result) string {
	var b strings.Builder
	b.WriteString("| seed | faults | overlaps, not paused | overlaps, paused | relabels off a live member: parents / children | late writes refused (409) / accepted, key held / accepted, key free | converged after the last fault (bound) | lost / extra / created twice | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		var faults []string
		for _, k := range allKinds {
			if n := r.faults[k]; n > 0 {
				faults = append(faults, fmt.Sprintf("%s %d", k, n))
			}
		}
		verdict := "ok"
		if len(r.failures) > 0 {
			verdict = fmt.Sprintf("**%d failures**", len(r.failures))
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %d / %d | %d / %d / %d | %s | %d / %d / %d | %s |\n",
			r.seed, strings.Join(faults, ", "), r.overlapsOther, r.overlapsPaused, r.movesLiveParents, r.movesLiveChildren,
			r.late.refused, r.late.acceptedHeld, r.late.acceptedFree, r.convergence(),
			len(r.objects.lost), len(r.objects.extra), len(r.objects.twice), verdict)
	}
	return b.String()
}
