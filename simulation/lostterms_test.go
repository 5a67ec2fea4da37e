package simulation

import (
	"testing"
	"time"
)

// "A term is lost only to another": a leader whose Run says its term was
// lost to another's write of the Lease, while only its own writes (a
// renew client-go sent twice, the second meeting the first) changed the
// Lease since its term began, is reported; the same loss after another
// replica's write landed (a takeover), or after the Lease was deleted,
// is not.
func TestATermLostToItsOwnWritesBreaksATermIsLostOnlyToAnother(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name  string
		other []Event // between the term's start and its loss
		want  bool
	}{
		{"only its own writes", nil, true},
		{"another replica's write landed", []Event{{At: at(6), What: LeaseWritten, Replica: "r1-0", Ring: LeaderRing, Detail: "PUT"}}, false},
		{"a conflicting writer's", []Event{{At: at(6), What: LeaseWritten, Replica: "a conflicting writer", Ring: LeaderRing, Detail: "PATCH"}}, false},
		{"the Lease deleted", []Event{{At: at(6), What: FaultEvent, Detail: "6s delete-sharder-lease"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := []Event{
				{At: at(1), What: TermStart, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Fence: 1},
				{At: at(5), What: LeaseWritten, Replica: "r0-0", Ring: LeaderRing, Detail: "PUT"},
			}
			events = append(events, tc.other...)
			events = append(events,
				Event{At: at(7), What: LeaseWritten, Replica: "r0-0", Ring: LeaderRing, Detail: "PUT"},
				Event{At: at(8), What: TermEnd, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Deadline: at(8)},
				Event{At: at(8), What: LostToWrite, Replica: "r0-0", Ring: LeaderRing, Member: "r0-0", Detail: "leadership lost: lease sim/sim-leader was written by another since this leader read it (409 Conflict)"})
			got := len(lostOnlyToOthers(events)) > 0
			if got != tc.want {
				t.Errorf("violation reported: %v, want %v (%s)", got, tc.want, tc.name)
			}
		})
	}
}
