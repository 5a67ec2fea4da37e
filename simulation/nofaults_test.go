package simulation_test

import (
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// With no faults at all, a replica set keeps every invariant the
// simulator checks, in every scenario: the harness's own baseline. A
// failure here is a bug in the library or the simulator on the plain
// path, and make test runs it on every change; the seeded sweep of fault
// schedules (TestSimulate) runs under make sim. Twenty seconds of
// writers' churn (not the sweep's thirty, -faults' default, nor
// Options.Faults' sixty) keep it short: with no fault, the length adds
// only more of the same.
func TestAReplicaSetWithNoFaultsKeepsEveryInvariant(t *testing.T) {
	for _, sc := range []struct {
		name     string
		scenario simulation.Scenario
	}{{"sharded", simulation.Sharded}, {"leader", simulation.LeaderElected}, {"crds", simulation.CustomResources}} {
		t.Run(sc.name, func(t *testing.T) {
			for seed := range int64(3) {
				res := simulation.Check(t, simulation.Options{Seed: seed + 1, Scenario: sc.scenario, Faults: 20 * time.Second}, simulation.Schedule{})
				if res.Failed() {
					t.Fatalf("seed %d with no faults:\n%s", seed+1, res.Report())
				}
			}
		})
	}
}
