package simulation

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Event is one entry of a run's history, stamped with simulated time:
// the bubble has one clock, so events of different replicas compare.
type Event struct {
	At   time.Time
	What string // see the constants below
	// Replica is the process (its identity for this life); Ring and
	// Member the shard (Ring "leader" in the leader-elected scenario,
	// Member the candidate's identity).
	Replica, Ring, Member string
	Key                   string    // a reconciled or relabelled object
	Detail                string    // a relabel's "from→to", a fault's description
	Fence                 uint64    // a term's fence
	Deadline              time.Time // a term's end by its renew deadline, at term-end
	// Setup numbers one setup of a term's controller (its informer, its
	// read-your-writes guard, its workers), on the events of its
	// reconciles: a guard's records live as long as its setup.
	Setup uint64
	// Object and Version name the object a reconcile read or wrote and
	// its resourceVersion ("" when the read found none), UID its UID;
	// Applied is the resourceVersion the reading informer had applied
	// just after the read (its LastSyncResourceVersion).
	Object, Version, UID, Applied string
}

// The events.
const (
	Begin      = "begin"      // a reconcile of Key began
	End        = "end"        // ... and ended
	TermStart  = "term-start" // a member's (or leader's) term began, with its Fence
	TermEnd    = "term-end"   // ... and its work returned; Deadline is its renew deadline
	SharderOn  = "sharder-on" // Replica became Ring's elected sharder
	SharderOff = "sharder-off"
	Relabel    = "relabel" // the checker's watch saw Key's Ring label go straight from one member to another
	Gap        = "gap"     // the checker's watch may have missed changes (a 410)
	FaultEvent = "fault"   // a fault began; Detail says which
	Healed     = "healed"  // a window fault ended
	Started    = "started" // Replica came up (a new identity), 1 to 50 ms after it was started or, if paused then, after the resume
	Retry      = "retry"   // a term's controller (its setup, or a Controller's Run) ended early and is tried again
	Stuck      = "stuck"   // Replica did not stop within a minute of its kill
	Stopped    = "stopped" // Replica was killed: everything of it has stopped
	// LeaseWritten: a write of Replica's changed the leader's Lease (the
	// server answered 2xx, whatever reached the replica).
	LeaseWritten = "lease-written"
	// LostToWrite: Replica's leader term ended, Run said, to another's
	// write of the Lease.
	LostToWrite = "lost-to-write"

	Read  = "read"  // a reconcile of Key read Object from its cache at Version ("" if absent); its informer had Applied
	Wrote = "wrote" // ... wrote Object, and the API server answered Version
	Stale = "stale" // the guard let Key run although its writes were not all in the cache, after MaxHold
	// Removed: a reconcile of Key deleted Object, of UID, and the API
	// server said so (its parent gone, it deleted the ring's child).
	Removed = "removed"
	// Unlabelled: a write of Replica's removed Ring's label from Object,
	// guarded by resourceVersion Version, and the API server answered
	// 2xx; Detail says whether its sharder or a member sent it.
	Unlabelled = "unlabelled"
	// Deleted: the checker's watch saw Key deleted, at resourceVersion
	// Version: a cache that shows it at an older version shows a ghost.
	Deleted = "deleted"
)

// String is the event as the history prints it: its time, kind and fields.
func (e Event) String() string {
	s := fmt.Sprintf("%s %-11s", e.At.Format("15:04:05.000"), e.What)
	for _, f := range []struct{ k, v string }{{"replica", e.Replica}, {"ring", e.Ring}, {"member", e.Member}, {"key", e.Key},
		{"object", e.Object}, {"rv", e.Version}, {"uid", e.UID}, {"applied", e.Applied}, {"", e.Detail}} {
		if f.v != "" {
			if f.k != "" {
				s += " " + f.k + "=" + f.v
			} else {
				s += " " + f.v
			}
		}
	}
	if e.What == Read && e.Version == "" {
		s += " absent"
	}
	if e.Setup != 0 {
		s += fmt.Sprintf(" setup=%d", e.Setup)
	}
	if e.What == TermStart {
		s += fmt.Sprintf(" fence=%d", e.Fence)
	}
	if e.What == TermEnd {
		s += " deadline=" + e.Deadline.Format("15:04:05.000")
	}
	return s
}

// History is the run's record, safe for concurrent use.
type History struct {
	mu     sync.Mutex
	events []Event
	start  time.Time
}

func (h *History) add(e Event) {
	e.At = time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// Events returns a copy of the history, in the order recorded (which is
// the order of At).
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.events...)
}

// Around returns the history's lines within d of t that match keep, for
// a failure report.
func (h *History) Around(t time.Time, d time.Duration, keep func(Event) bool) string {
	var b strings.Builder
	for _, e := range h.Events() {
		if e.At.Before(t.Add(-d)) || e.At.After(t.Add(d)) || !keep(e) {
			continue
		}
		b.WriteString("    " + e.String() + "\n")
	}
	return b.String()
}
