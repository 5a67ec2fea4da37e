package simulation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// A killed replica whose restart falls at the very instant every fault
// heals is restarted once: the restart timer and the heal both find the
// slot empty, and only one of them may start a replica in it (the other's
// would run on, never stopped, past the bubble's end).
func TestASlotRestartedByItsTimerAsTheFaultsHealHoldsOneReplica(t *testing.T) {
	for seed := range int64(30) {
		res := simulation.Check(t, simulation.Options{Seed: seed + 1, Scenario: simulation.LeaderElected, Faults: 10 * time.Second},
			simulation.Schedule{{At: 7 * time.Second, Kind: simulation.Kill, Replica: 2, For: 3 * time.Second}})
		up := 0
		for _, e := range res.History.Events() {
			if e.What == simulation.Started && strings.HasPrefix(e.Replica, "r2-") {
				up++
			}
		}
		if up != 2 {
			t.Fatalf("seed %d: slot 2 came up %d times, want twice: at the start, and once after its kill", seed+1, up)
		}
	}
}
