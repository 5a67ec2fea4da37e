package simulation

import (
	"testing"
	"time"
)

// Sharding promises one reconcile of one object at a time, not of one
// name. A member's slow reconcile of p-02 (its requests delayed) is still
// running when the object is deleted and created again under the name,
// on another member, which reconciles the new life: two objects, one
// name, no violation. Without the delete the same two reconciles are one
// object reconciled twice at once, and reported. (Found by a sweep at
// kube-controller-manager's timing, seed 234, which reported the first.)
func TestAReconcileOfAnObjectDeletedWhileItRunsOverlapsItsSuccessorsLife(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name    string
		deleted bool
		want    bool
	}{
		{"deleted while the first ran", true, false},
		{"never deleted", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := []Event{
				{At: at(0), What: TermStart, Replica: "r1-0", Ring: "web", Member: "m-a", Fence: 1},
				{At: at(0), What: TermStart, Replica: "r0-0", Ring: "web", Member: "m-b", Fence: 2},
				{At: at(24353), What: Begin, Replica: "r1-0", Ring: "web", Member: "m-a", Key: "sim/p-02"},
				{At: at(24353), What: Read, Replica: "r1-0", Ring: "web", Member: "m-a", Key: "sim/p-02", Object: "p-02", Version: "284"},
			}
			if tc.deleted {
				events = append(events, Event{At: at(24895), What: Deleted, Key: "sim/p-02", Version: "293"})
			}
			events = append(events,
				Event{At: at(26900), What: Begin, Replica: "r0-0", Ring: "web", Member: "m-b", Key: "sim/p-02"},
				Event{At: at(26900), What: Read, Replica: "r0-0", Ring: "web", Member: "m-b", Key: "sim/p-02", Object: "p-02", Version: "312"},
				Event{At: at(26953), What: End, Replica: "r1-0", Ring: "web", Member: "m-a", Key: "sim/p-02"},
				Event{At: at(27001), What: End, Replica: "r0-0", Ring: "web", Member: "m-b", Key: "sim/p-02"},
			)
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: events}}
			got := violations(w.checkHistory(nil))["one reconcile per key"] > 0
			if got != tc.want {
				t.Errorf("one reconcile per key reported: %v, want %v (%s)", got, tc.want, tc.name)
			}
		})
	}
}
