package simulation_test

import (
	"bytes"
	"flag"
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
	// unmadeRunProbeEnv gives every seed a label no run can be made with,
	// so Check fails t in both processes: for
	// TestBothHalvesAreReportedWhenARunCannotBeMade.
	unmadeRunProbeEnv = "SIMULATION_SUITE_UNMADE_RUN_PROBE"
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
	child := exec.CommandContext(t.Context(), os.Args[0], append([]string{"-test.run=^" + t.Name() + "$", "-test.count=1"}, childTimeout()...)...)
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
	// The second half is waited for and reported however this one ends:
	// a deferred call runs before t's context is cancelled, even after a
	// Fatal (Check's own, for a run it could not make, ends this
	// goroutine), so a failure in the first half hides none in the second.
	defer func() {
		if err := child.Wait(); err != nil {
			t.Errorf("seeds %d to %d: %v\n%s", suiteFirstSeed+half, suiteFirstSeed+suiteSeeds-1, err, out.String())
			return
		}
		if !t.Failed() {
			t.Logf("%d seeds in %v over two processes", suiteSeeds, time.Since(start).Round(time.Millisecond))
		}
	}()
	if failed := checkSeeds(t, suiteFirstSeed, half); failed != "" {
		t.Fatal(failed)
	}
}

// childTimeout gives the second process a -test.timeout half a minute
// shorter than this one's, so that a seed that hangs there panics with
// its stacks before go test ends this process and its output with it.
func childTimeout() []string {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return nil
	}
	d, err := time.ParseDuration(f.Value.String())
	if err != nil || d <= time.Minute {
		return nil
	}
	return []string{"-test.timeout=" + (d - 30*time.Second).String()}
}

// checkSeeds runs n seeds from first, and stops at the first that fails,
// which it describes with its replay command; "" if none failed. A seed
// whose run Check could not make ends the test there, naming the seed.
func checkSeeds(t *testing.T, first, n int64) string {
	for s := first; s < first+n; s++ {
		opts := simulation.Options{Seed: s, Scenario: simulation.LeaderElected, Faults: suiteFaults}
		if os.Getenv(unmadeRunProbeEnv) != "" {
			opts.Label = "not a label!"
		}
		res := simulation.Check(t, opts, nil)
		if res.Failed() {
			return fmt.Sprintf("seed %d failed; replay: go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=leader -faults=%v -seed=%d -v\n%s",
				s, suiteFaults, s, res.Report())
		}
	}
	return ""
}

// A seed whose run cannot be made ends the first half's goroutine in
// Check (synctest.Test fails t outside the bubble); the second half is
// still waited for and reported, not killed unread with t's context.
func TestBothHalvesAreReportedWhenARunCannotBeMade(t *testing.T) {
	probe := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestTwoHundredFaultSchedulesOfALeaderElectedReplicaSetKeepEveryInvariant$", "-test.count=1")
	probe.Env = append(os.Environ(), unmadeRunProbeEnv+"=1")
	out, err := probe.CombinedOutput()
	if err == nil {
		t.Fatalf("the probe's runs were made:\n%s", out)
	}
	for _, want := range []string{"seed 1: ", "seeds 101 to 200: exit status 1", "seed 101: "} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
