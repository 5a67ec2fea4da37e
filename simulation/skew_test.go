package simulation_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// A term's end is recorded at the earlier of its work's return and its
// renew deadline, and the deadline (Term.End) is read on the replica's
// clock, which a Skew makes fast or slow; the history is kept on the
// bubble's one clock. Here every clock runs 10% fast for 30 s (3 s ahead
// afterwards, within the documented bound), then every replica is
// partitioned, so the leader's term ends at its deadline while its work
// takes 3 s more to return. Recorded on its own clock, the deadline was
// 3 s late, and the next leader's term "overlapped" it (the review of the
// Skew fault proved it, seeds 2, 3 and 5). Without the skew these seeds
// always passed.
func TestASkewedReplicasRenewDeadlineIsRecordedOnTheHistorysClock(t *testing.T) {
	slowReturn := &simulation.Controller{Run: func(ctx context.Context, term simulation.Term) {
		<-ctx.Done()
		time.Sleep(3 * time.Second) // finishing its work in flight
	}}
	var sched simulation.Schedule
	for r := range 3 {
		sched = append(sched, simulation.Fault{At: 2 * time.Second, Kind: simulation.Skew, Replica: r, For: 30 * time.Second, Rate: 1.10})
	}
	for r := range 3 {
		sched = append(sched, simulation.Fault{At: 40 * time.Second, Kind: simulation.Partition, Replica: r, For: 4500 * time.Millisecond})
	}
	for seed := range int64(5) {
		res := simulation.Check(t, simulation.Options{Seed: seed + 1, Scenario: simulation.LeaderElected, Faults: 50 * time.Second, Controller: slowReturn}, sched)
		if res.Failed() {
			t.Errorf("seed %d:\n%s", seed+1, res.Report())
		}
	}
}
