package simulation

import (
	"testing"
	"time"
)

// "One leader" and "one reconcile per key" are excused "outside pauses"
// (doc.go): leader election does not fence a paused process. But
// overlaps excuses a pair if either replica was paused at any moment of
// its whole interval (w.paused, not w.pausedBy the overlap): a leader
// term that overlapped another's for ten seconds while neither was
// paused is excused because its replica was paused once, long after
// the overlap had ended. A pause cannot excuse what came before it.
// Here r0-0 leads from 0 s to 100 s, r1-0 also leads from 10 s to 20 s
// and reconciles cm-1 from 12 s to 13 s while r0-0 does: a double
// leader with no pause anywhere near. r0-0 is paused from 90 s to 91 s.
func TestAPauseLongAfterTwoLeadersOverlappedDoesNotExcuseTheOverlap(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	events := []Event{
		{At: at(0), What: Started, Replica: "r0-0"},
		{At: at(0), What: Started, Replica: "r1-0"},
		{At: at(1), What: TermStart, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Fence: 10},
		{At: at(10), What: TermStart, Replica: "r1-0", Ring: LeaderRing, Member: "r1-0", Fence: 20},
		{At: at(12), What: Begin, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Key: "sim/cm-1"},
		{At: at(12), What: Begin, Replica: "r1-0", Ring: LeaderRing, Member: "r1-0", Key: "sim/cm-1"},
		{At: at(13), What: End, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Key: "sim/cm-1"},
		{At: at(13), What: End, Replica: "r1-0", Ring: LeaderRing, Member: "r1-0", Key: "sim/cm-1"},
		{At: at(20), What: TermEnd, Replica: "r1-0", Ring: LeaderRing, Member: "r1-0", Deadline: at(20)},
		{At: at(100), What: TermEnd, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Deadline: at(100)},
	}
	for _, tc := range []struct {
		name   string
		pauses []span
	}{
		{"no pause", nil},
		{"a pause 70 s after the overlap", []span{{slot: 0, from: at(90), to: at(91)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: events}, pauses: tc.pauses}
			got := violations(w.checkHistory(nil))
			if got["one leader"] == 0 {
				t.Errorf("two leader terms overlapped 10 s–20 s, no replica paused then: violations %v, want one leader", got)
			}
			if got["one reconcile per key"] == 0 {
				t.Errorf("two leaders reconciled sim/cm-1 at once 12 s–13 s, no replica paused then: violations %v, want one reconcile per key", got)
			}
		})
	}
}
