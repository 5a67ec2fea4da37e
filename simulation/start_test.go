package simulation

import (
	"testing"
	"time"
)

// A replica's come-up and start times are the seed's and its name's: the
// same on every run, within their bounds, and different for another
// replica.
func TestAReplicasBootTimesAreDrawnFromTheSeedAndItsName(t *testing.T) {
	a, b := newBootTimes(7, "r0-0"), newBootTimes(7, "r0-0")
	up := a.up()
	if up != b.up() {
		t.Fatal("one seed and one replica gave two come-up times")
	}
	if up < time.Millisecond || up >= 50*time.Millisecond {
		t.Errorf("comes up after %v, want 1 to 50 ms", up)
	}
	var last time.Duration
	for range 4 {
		next := a.next()
		if next != b.next() {
			t.Fatal("one seed and one replica gave two sets of start times")
		}
		if gap := next - last; gap < time.Millisecond || gap >= 10*time.Millisecond {
			t.Errorf("a part starts %v after the one before, want 1 to 10 ms", gap)
		}
		last = next
	}
	ups := map[time.Duration]bool{}
	for _, name := range []string{"r0-0", "r1-0", "r2-0", "r0-1", "r1-1"} {
		ups[newBootTimes(7, name).up()] = true
	}
	if len(ups) < 5 {
		t.Errorf("five replicas of one seed came up after only %d distinct times", len(ups))
	}
}
