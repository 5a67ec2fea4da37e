package simulation

import (
	"slices"
	"testing"
	"time"
)

// The replicas start in an order and with gaps the seed chooses: the same
// seed, the same start; other seeds, other first replicas.
func TestReplicasStartInAnOrderAndWithGapsTheSeedChooses(t *testing.T) {
	firsts := map[int]bool{}
	for seed := range int64(20) {
		order := startOrder(seed, 5)
		if !slices.Equal(order, startOrder(seed, 5)) {
			t.Fatalf("seed %d: two start orders differ: %v, %v", seed, order, startOrder(seed, 5))
		}
		slots := map[int]bool{}
		for _, s := range order {
			slots[s.slot] = true
			if s.gap < time.Millisecond || s.gap >= 50*time.Millisecond {
				t.Errorf("seed %d: gap %v after slot %d, want 1 to 50 ms", seed, s.gap, s.slot)
			}
		}
		if len(slots) != 5 {
			t.Errorf("seed %d: order %v does not start every slot once", seed, order)
		}
		firsts[order[0].slot] = true
	}
	if len(firsts) < 3 {
		t.Errorf("20 seeds started only slots %v first: the order is not the seed's", firsts)
	}

	a, b := newStartGaps(7, "r0-0"), newStartGaps(7, "r0-0")
	var last time.Duration
	for range 4 {
		next := a.next()
		if next != b.next() {
			t.Fatal("one seed and one replica gave two sets of start gaps")
		}
		if gap := next - last; gap < time.Millisecond || gap >= 10*time.Millisecond {
			t.Errorf("a replica's part starts %v after the one before, want 1 to 10 ms", gap)
		}
		last = next
	}
}
