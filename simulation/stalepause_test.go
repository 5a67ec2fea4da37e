package simulation

import (
	"testing"
	"time"
)

// "Read your writes" holds that a key runs stale "no sooner than MaxHold
// after the key's last write, by the replica's clock", and excuses a
// stale run that came sooner if its replica was paused in between
// (readwrites.go: !w.paused(...)). But a pause can only make a stale run
// later: a paused replica's wall clock runs on and its timers wait for
// the resume (gate.go), so the guard's MaxHold ends no sooner in the
// bubble's time. The excuse lets a guard that ignores MaxHold off
// whenever its replica paused once between the write and the stale run:
// here the key runs stale 1.1 s after its write (MaxHold 5 s) and reads
// its parent older than its own write, after a 100 ms pause. Without the
// pause it is reported; with it, nothing is.
func TestAStaleRunBeforeMaxHoldIsNotExcusedByAPauseThatCouldOnlyDelayIt(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, what string, object, version, applied string) Event {
		return Event{At: at(ms), What: what, Replica: "r0-0", Ring: "web", Member: "m-a", Key: "sim/p-01",
			Setup: 1, Object: object, Version: version, Applied: applied}
	}
	events := []Event{
		ev(0, Begin, "", "", ""), ev(1, Read, "p-01", "10", "10"),
		ev(100, Wrote, "p-01", "20", ""), ev(101, End, "", "", ""),
		ev(1200, Stale, "", "", ""), ev(1200, Begin, "", "", ""), ev(1200, Read, "p-01", "10", "19"), ev(1300, End, "", "", ""),
	}
	for _, tc := range []struct {
		name   string
		pauses []span
	}{
		{"no pause", nil},
		{"a 100 ms pause between the write and the stale run", []span{{slot: 0, from: at(500), to: at(600)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{opts: Options{}.withDefaults(), hist: &History{events: events}, pauses: tc.pauses}
			if got := violations(w.checkHistory(nil)); got["read your writes"] == 0 {
				t.Errorf("sim/p-01 ran stale 1.1 s after its write (MaxHold %v) and read p-01 at 10, older than its write at 20: violations %v, want read your writes",
					guardMaxHold, got)
			}
		})
	}
}
