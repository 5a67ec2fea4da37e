package simulation_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/listwatch/informer/simulation"
)

// The suite's share of the seeded sweep: make test runs these seeds of
// the leader-elected scenario, each a fault schedule of its own, with
// -race. Ten seconds of faults (the sweep's default is thirty) keep a
// seed under half a second with -race; the sweep (make sim) goes longer
// and further.
const (
	suiteFirstSeed = 1
	suiteSeeds     = 200
	suiteFaults    = 10 * time.Second
	// suitePartEnv, set in a child process, says the child runs the
	// second half of the seeds. A process runs its seeds one after
	// another (Check seeds one global random source), so two cores need
	// two processes.
	suitePartEnv = "SIMULATION_SUITE_SECOND_HALF"
	// orphanProbeEnv makes the test binary kill itself right after it
	// starts the second process, and the second process wait, writing
	// nothing:
	// TestTheSuitesSecondProcessDiesWithItsParent then sees whether
	// anything but the kernel's tie to its parent would end it.
	orphanProbeEnv = "SIMULATION_SUITE_ORPHAN_PROBE"
)

// Every one of 200 fault schedules of a leader-elected replica set keeps
// every invariant the simulator checks (see the package doc): one leader,
// fences that grow, one reconcile per key, convergence once faults stop,
// caches equal to the server. A failure prints its seed's replay command,
// from either process.
func TestTwoHundredFaultSchedulesOfALeaderElectedReplicaSetKeepEveryInvariant(t *testing.T) {
	half := int64(suiteSeeds / 2)
	if os.Getenv(suitePartEnv) != "" {
		if os.Getenv(orphanProbeEnv) != "" {
			time.Sleep(time.Hour)
		}
		if failed := checkSeeds(t, suiteFirstSeed+half, suiteSeeds-half); failed != "" {
			t.Fatal(failed)
		}
		return
	}
	start := time.Now()
	child := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	child.Env = append(os.Environ(), suitePartEnv+"=1")
	child.SysProcAttr = tieToParent()
	var out bytes.Buffer
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatalf("starting the process for the second half of the seeds: %v", err)
	}
	if os.Getenv(orphanProbeEnv) != "" {
		// As kill -9 does, or go test's -timeout (which panics outside
		// the test, cancelling no context): nothing of this process runs
		// after this.
		dieAtOnce()
	}
	// Both halves run to their end (or first failure) before either is
	// reported, so a failure in the first half hides none in the second.
	failed := checkSeeds(t, suiteFirstSeed, half)
	if err := child.Wait(); err != nil {
		t.Errorf("seeds %d to %d: %v\n%s", suiteFirstSeed+half, suiteFirstSeed+suiteSeeds-1, err, out.String())
	}
	if failed != "" {
		t.Fatal(failed)
	}
	t.Logf("%d seeds in %v over two processes", suiteSeeds, time.Since(start).Round(time.Millisecond))
}

// checkSeeds runs n seeds from first, and stops at the first that fails,
// which it describes with its replay command; "" if none failed. A seed
// whose run could not be made (Check has failed t) fails too.
func checkSeeds(t *testing.T, first, n int64) string {
	for s := first; s < first+n; s++ {
		res := simulation.Check(t, simulation.Options{Seed: s, Scenario: simulation.LeaderElected, Faults: suiteFaults}, nil)
		if res.Failed() || t.Failed() {
			return fmt.Sprintf("seed %d failed; replay: go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=leader -faults=%v -seed=%d -v\n%s",
				s, suiteFaults, s, res.Report())
		}
	}
	return ""
}
