package simulation

import (
	"testing"
	"time"
)

// "One reconcile per key" pairs reconciles of two members; in the
// leader-elected scenario a term's Member is its replica's name
// (leader.go), so two terms of one replica are one member to overlaps,
// which skips a pair of one member. A reconcile of the replica's first
// term still running into its second term, while that term reconciles
// the same key (two workqueues in one process: the first term's workers
// were never stopped), is then not judged. In the sharded scenario each
// term draws a member id of its own, and the same history is reported:
// the subtest "ring web, a member id per term" passes, "leader" fails.
func TestAReconcileOfALeadersEarlierTermOverlappingItsNextTermsBreaksOneReconcilePerKey(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name, ring, first, second string
	}{
		{"ring web, a member id per term", "web", "m-a", "m-b"},
		{"leader", LeaderRing, "r0-0", "r0-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: []Event{
				{At: at(0), What: Started, Replica: "r0-0"},
				{At: at(1), What: TermStart, Replica: "r0-0", Ring: tc.ring, Member: tc.first, Fence: 10},
				{At: at(5), What: Begin, Replica: "r0-0", Ring: tc.ring, Member: tc.first, Key: "sim/cm-1"},
				{At: at(10), What: TermEnd, Replica: "r0-0", Ring: tc.ring, Member: tc.first, Deadline: at(10)},
				{At: at(11), What: TermStart, Replica: "r0-0", Ring: tc.ring, Member: tc.second, Fence: 20},
				{At: at(12), What: Begin, Replica: "r0-0", Ring: tc.ring, Member: tc.second, Key: "sim/cm-1"},
				{At: at(13), What: End, Replica: "r0-0", Ring: tc.ring, Member: tc.second, Key: "sim/cm-1"},
				{At: at(15), What: End, Replica: "r0-0", Ring: tc.ring, Member: tc.first, Key: "sim/cm-1"}, // 5 s past its term
				{At: at(30), What: TermEnd, Replica: "r0-0", Ring: tc.ring, Member: tc.second, Deadline: at(30)},
			}}}
			if got := violations(w.checkHistory(nil)); got["one reconcile per key"] == 0 {
				t.Errorf("sim/cm-1 reconciled 5 s–15 s (first term, ended 10 s) and 12 s–13 s (second term) at once: violations %v, want one reconcile per key", got)
			}
		})
	}
}
