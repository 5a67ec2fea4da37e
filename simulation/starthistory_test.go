package simulation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// No two replicas come up at one instant, at the run's start or restarted
// together (by their restart timers, or when every fault heals): which
// of them creates the Lease first is the seed's choice, not the
// runtime's, so a replay repeats it.
func TestReplicasStartedOrRestartedTogetherComeUpApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched simulation.Schedule
	}{
		{"restart timers fire together", simulation.Schedule{
			{At: 2 * time.Second, Kind: simulation.Kill, Replica: 0, For: 3 * time.Second},
			{At: 2 * time.Second, Kind: simulation.Kill, Replica: 1, For: 3 * time.Second},
		}},
		{"the heal restarts both", simulation.Schedule{
			{At: 2 * time.Second, Kind: simulation.Kill, Replica: 0, For: 30 * time.Second},
			{At: 2 * time.Second, Kind: simulation.Kill, Replica: 1, For: 30 * time.Second},
		}},
	} {
		res := simulation.Check(t, simulation.Options{Seed: 1, Scenario: simulation.LeaderElected, Faults: 10 * time.Second}, tc.sched)
		started := map[time.Time][]string{}
		for _, e := range res.History.Events() {
			if e.What == simulation.Started {
				started[e.At] = append(started[e.At], e.Replica)
			}
		}
		if len(started) < 5 {
			t.Errorf("%s: %d come-ups recorded, want the three first replicas and two restarts", tc.name, len(started))
		}
		for at, rs := range started {
			if len(rs) > 1 {
				t.Errorf("%s: replicas %v came up at one instant, %s", tc.name, rs, at.Format("15:04:05.000"))
			}
		}
	}
}

// A fault's At counts from the run's start, whatever the replicas are
// doing then: one due while they come up is applied at its time.
func TestAFaultDueWhileTheReplicasComeUpIsAppliedAtItsTime(t *testing.T) {
	res := simulation.Check(t, simulation.Options{Seed: 1, Scenario: simulation.LeaderElected, Faults: 5 * time.Second},
		simulation.Schedule{{At: 10 * time.Millisecond, Kind: simulation.CutWatches}})
	bubbleStart := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC) // testing/synctest's epoch, where a run starts
	applied := false
	for _, e := range res.History.Events() {
		if e.What == simulation.FaultEvent {
			applied = true
			if got := e.At.Sub(bubbleStart); got != 10*time.Millisecond {
				t.Errorf("a fault due at 10ms was applied at %v", got)
			}
		}
	}
	if !applied {
		t.Error("the fault was never applied")
	}
}

// A replica paused while it comes up comes up only after the resume, and
// then its own come-up time later: replicas freed by one resume, at the
// run's start or restarted during the pause, still come up apart.
func TestReplicasPausedWhileComingUpComeUpApartAfterTheResume(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sched  simulation.Schedule
		resume time.Duration
	}{
		{"paused from the start", simulation.Schedule{
			{At: 0, Kind: simulation.Pause, Replica: 0, For: time.Second},
			{At: 0, Kind: simulation.Pause, Replica: 1, For: time.Second},
		}, time.Second},
		{"restarted while paused", simulation.Schedule{
			{At: time.Second, Kind: simulation.Kill, Replica: 0, For: time.Second},
			{At: time.Second, Kind: simulation.Kill, Replica: 1, For: 1100 * time.Millisecond},
			{At: 1500 * time.Millisecond, Kind: simulation.Pause, Replica: 0, For: time.Second},
			{At: 1500 * time.Millisecond, Kind: simulation.Pause, Replica: 1, For: time.Second},
		}, 2500 * time.Millisecond},
	} {
		res := simulation.Check(t, simulation.Options{Seed: 1, Scenario: simulation.LeaderElected, Faults: 4 * time.Second}, tc.sched)
		resume := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(tc.resume) // testing/synctest's epoch, plus the resume
		started := map[time.Time][]string{}
		freed := 0
		for _, e := range res.History.Events() {
			if e.What != simulation.Started {
				continue
			}
			started[e.At] = append(started[e.At], e.Replica)
			if (strings.HasPrefix(e.Replica, "r0-") || strings.HasPrefix(e.Replica, "r1-")) && !e.At.Before(resume) && e.At.Before(resume.Add(50*time.Millisecond)) {
				freed++
			}
		}
		if freed != 2 {
			t.Errorf("%s: %d of slots 0 and 1 came up within 50 ms after the resume, want both", tc.name, freed)
		}
		for at, rs := range started {
			if len(rs) > 1 {
				t.Errorf("%s: replicas %v came up at one instant, %s", tc.name, rs, at.Format("15:04:05.000"))
			}
		}
	}
}
