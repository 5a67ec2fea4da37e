//go:build simsweep

// The seeded sweep is built only with the simsweep tag (make sim): a
// rare interleaving can still fail a seed that passed thousands of times
// (seed 827 of the sharded scenario, see the package doc), so in make
// test it would fail on a seed's luck, not on a change.
// TestAReplicaSetWithNoFaultsKeepsEveryInvariant runs in make test.

package simulation_test

import (
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/simulation"
)

var (
	seed     = flag.Int64("seed", -1, "run this seed alone (replay)")
	seeds    = flag.Int("seeds", 0, "how many seeds to run, from -first (make sim sets it)")
	first    = flag.Int64("first", 1, "the first seed of a sweep")
	scenario = flag.String("scenario", "sharded", "sharded, leader or crds")
	replicas = flag.Int("replicas", 3, "replica slots, 3 to 5")
	faults   = flag.Duration("faults", 30*time.Second, "how long faults are drawn for")
	shrink   = flag.Bool("shrink", true, "shrink a failing schedule")
	keepOn   = flag.Bool("keep-going", false, "run every seed, reporting each failure (no shrinking), instead of stopping at the first")
	replays  = flag.Int("replays", 0, "run -seed (default 1) this many times (default 3) and report how many runs had the first run's history and outcome")
	realMax  = flag.Duration("seed-timeout", 2*time.Minute, "real time one seed may take before the sweep panics with every goroutine's stack: a goroutine that spins keeps simulated time from advancing, so no invariant of the run can report it")
	heapMax  = flag.Uint64("seed-heap", 2048, "MiB of heap the process may reach before the sweep panics with every goroutine's stack, naming the seed: a run that allocates without end")
	timing   = flag.String("timing", "", "the Lease timing LEASE/RENEW/RETRY, such as 15s/10s/2s (kube-controller-manager's); default the simulator's, 4s/3s/500ms")
	history  = flag.String("history", "", "write a failing seed's whole history, the library's debug logs and its trace events to this file (with -seed, also a run that passed); a %d in its name is the seed (one file per failing seed with -keep-going)")
)

// leaseTiming is -timing's Timing, the zero Timing (the default) if it
// is unset; a malformed one stops the sweep.
func leaseTiming() simulation.Timing {
	if *timing == "" {
		return simulation.Timing{}
	}
	var d [3]time.Duration
	parts := strings.Split(*timing, "/")
	for i := range d {
		var err error
		if len(parts) != 3 {
			err = fmt.Errorf("want three durations")
		} else {
			d[i], err = time.ParseDuration(parts[i])
		}
		if err != nil {
			panic(fmt.Sprintf("-timing=%q: not LEASE/RENEW/RETRY: %v", *timing, err))
		}
	}
	return simulation.Timing{Lease: d[0], Renew: d[1], Retry: d[2], Work: simulation.DefaultTiming.Work}
}

// logs holds the current seed's library logs and trace events when
// -history is set; each seed starts it afresh.
var logs testlog.Buffer

func options(s int64) simulation.Options {
	sc := simulation.Sharded
	switch *scenario {
	case "leader":
		sc = simulation.LeaderElected
	case "crds":
		sc = simulation.CustomResources
	}
	opts := simulation.Options{Seed: s, Scenario: sc, Replicas: *replicas, Faults: *faults, Timing: leaseTiming()}
	if *history != "" {
		logs.Reset()
		opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		opts.Trace = func(e informer.TraceEvent) {
			fmt.Fprintf(&logs, "%s trace %s\n", time.Now().UTC().Format("15:04:05.000"), e)
		}
	}
	return opts
}

// Every seed's run keeps every invariant: one reconcile per key, one
// leader, fences that grow, moves only by drain, convergence within the
// bound once faults stop, and caches equal to the server at quiescence.
//
// Built with -tags simsweep (make sim); -seed=N replays one seed.
func TestSimulate(t *testing.T) {
	list := []int64{*seed}
	if *seed < 0 {
		n := max(*seeds, 1)
		list = list[:0]
		for i := range int64(n) {
			list = append(list, *first+i)
		}
	}
	start := time.Now()
	var simulated time.Duration
	ran := 0
	reached := map[string]int{} // seeds that reached each case the scenario counts
	for _, s := range list {
		ran++
		opts := options(s)
		stopWatch := watchSeed(s, *scenario, *realMax, *heapMax<<20)
		res := simulation.Check(t, opts, nil)
		stopWatch()
		simulated += res.Simulated
		for c, n := range res.Coverage {
			reached[c] += min(n, 1)
		}
		if !res.Failed() {
			if *seed >= 0 && *history != "" { // a replay that passed: to set beside one that failed
				writeHistory(t, s, res)
			}
			continue
		}
		t.Errorf("seed %d failed; replay: GOMAXPROCS=%d go test -tags simsweep ./simulation -run 'TestSimulate$' -scenario=%s -replicas=%d -faults=%v%s -seed=%d -v\n%s",
			s, runtime.GOMAXPROCS(0), *scenario, *replicas, *faults, timingFlag(), s, res.Report())
		if *history != "" {
			writeHistory(t, s, res)
		}
		if *keepOn {
			continue
		}
		if *shrink {
			min, mres := simulation.Shrink(t, opts, res)
			t.Logf("seed %d shrunk from %d to %d faults:\n%s", s, len(res.Schedule), len(min), mres.Report())
		}
		break
	}
	real := time.Since(start)
	t.Logf("%d seeds in %v: %.0f seeds/minute, simulated/real %.0f×", ran, real.Round(time.Millisecond),
		float64(ran)/real.Minutes(), float64(simulated)/float64(real))
	logCoverage(t, ran, reached)
	if gaps := simulation.CoverageGaps(options(0).Scenario, reached); ran >= coverageSeeds && len(gaps) > 0 {
		t.Errorf("no seed of %d reached %q: its invariant checked nothing", ran, gaps)
	}
}

// coverageSeeds is how many seeds a sweep process runs before a case no
// seed reached fails it: every case of the crds scenario is reached in
// more than a tenth of the seeds (docs/18), so one missed in a hundred
// says the model, or the library, no longer brings it about.
const coverageSeeds = 100

// logCoverage prints, for each case the scenario counts, in how many of
// the seeds run it was reached (hack/sim.sh adds the processes' lines
// up).
func logCoverage(t *testing.T, ran int, reached map[string]int) {
	for _, c := range slices.Sorted(maps.Keys(reached)) {
		t.Logf("coverage: %d of %d seeds: %s", reached[c], ran, c)
	}
}

// Replaying one seed gives the same schedule, member ids and jitter
// (see Check); only the goroutines' order is the runtime's. This reports
// how often a replay is the same run: the same history, event for event
// and to the simulated nanosecond, and the same outcome.
//
// Built with -tags simsweep: -seed=N -replays=10 (default seed 1, three
// runs).
func TestReplay(t *testing.T) {
	s, n := *seed, *replays
	if s < 0 {
		s = 1
	}
	if n < 2 {
		n = 3
	}
	var first string
	var firstFailed bool
	same, failed := 0, 0
	for i := range n {
		res := simulation.Check(t, options(s), nil)
		var b strings.Builder
		for _, e := range res.History.Events() {
			fmt.Fprintln(&b, e)
		}
		if res.Failed() {
			failed++
		}
		if i == 0 {
			first, firstFailed = b.String(), res.Failed()
			continue
		}
		if b.String() == first && res.Failed() == firstFailed {
			same++
		}
	}
	t.Logf("seed %d: %d of %d replays had the first run's history and outcome; %d of %d runs failed",
		s, same, n-1, failed, n)
}

func writeHistory(t *testing.T, seed int64, res simulation.Result) {
	var b strings.Builder
	for _, e := range res.History.Events() {
		fmt.Fprintln(&b, e)
	}
	b.WriteString("\n# the library's logs and trace events\n")
	b.WriteString(logs.String())
	name := *history
	if strings.Contains(name, "%d") {
		name = fmt.Sprintf(name, seed)
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// timingFlag is -timing as a replay passes it, "" when unset.
func timingFlag() string {
	if *timing == "" {
		return ""
	}
	return " -timing=" + *timing
}
