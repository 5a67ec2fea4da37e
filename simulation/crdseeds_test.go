package simulation_test

import (
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// The suite's share of the custom resources scenario: make test runs
// these seeds with -race, ten seconds of faults each, in one process
// (the leader-elected share runs in two): 40 of them took 28 s on a
// loaded 2-core machine, so 20 keep it near the suite's 15 s budget.
const (
	crdSuiteSeeds  = 20
	crdSuiteFaults = 10 * time.Second
)

// Every one of 20 fault schedules of the custom resources scenario keeps
// every invariant it checks (see the package doc): sync wait returns,
// release returns, re-ask returns, released informer stops, no delete of
// a live object, held informer equals server, not served says so, and
// convergence once the faults stop. Together they reach every case the
// scenario counts (Result.Coverage): an invariant is checked only where
// its case comes about.
func TestTwentyFaultSchedulesOfTheCustomResourcesScenarioKeepEveryInvariant(t *testing.T) {
	start := time.Now()
	reached := map[string]int{}
	for s := int64(1); s <= crdSuiteSeeds; s++ {
		res := simulation.Check(t, simulation.Options{Seed: s, Scenario: simulation.CustomResources, Faults: crdSuiteFaults}, nil)
		if res.Failed() {
			t.Fatalf("seed %d failed; replay: go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=crds -faults=%v -seed=%d -v\n%s",
				s, crdSuiteFaults, s, res.Report())
		}
		for c, n := range res.Coverage {
			reached[c] += min(n, 1)
		}
	}
	t.Logf("%d seeds in %v; seeds that reached each case: %v", crdSuiteSeeds, time.Since(start).Round(time.Millisecond), reached)
	if gaps := simulation.CoverageGaps(simulation.CustomResources, reached); len(gaps) > 0 {
		t.Errorf("no seed of %d reached %q: its invariant checked nothing", crdSuiteSeeds, gaps)
	}
}
