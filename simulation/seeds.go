package simulation

import (
	"sync"
	"testing"
	"testing/synctest"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/listwatch/informer/internal/random"
)

// handlersMu serializes the swaps of utilruntime.ErrorHandlers.
var handlersMu sync.Mutex

// quietErrorHandlers empties apimachinery's global ErrorHandlers until
// the returned function restores them. Their backoff handler blocks a
// bubble: it remembers the wall-clock time of the process's start
// (time.Now at package init, years after a bubble's year-2000 clock) and
// sleeps "minPeriod minus the time since", about 26 years of simulated
// time, which with any periodic timer in the bubble (a bookmark, a
// renew) is a hang in real time. client-go's discovery cache calls it on
// every failed discovery (memcache.go:381), reached through
// sharedinformer's resource check (resolve.go:72).
func quietErrorHandlers() (restore func()) {
	handlersMu.Lock()
	saved := utilruntime.ErrorHandlers
	utilruntime.ErrorHandlers = nil
	return func() {
		utilruntime.ErrorHandlers = saved
		handlersMu.Unlock()
	}
}

// Check runs one seed in a synctest bubble of its own: the schedule
// the scenario draws from opts.Seed (NewSchedule, or NewCRDSchedule), or sched if it is not nil.
// Options that cannot run fail t with Run's error, which names the
// option, before anything is drawn
// (TestCheckWithOptionsThatCannotRunFailsNamingTheOption).
func Check(t *testing.T, opts Options, sched Schedule) Result {
	t.Helper()
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil { // before the draw, which some would panic in
		t.Fatalf("seed %d: %v", opts.Seed, err)
	}
	if sched == nil {
		sched = opts.Scenario.schedule(opts.Seed, opts.Replicas, opts.Faults)
	}
	defer quietErrorHandlers()()
	// Every random draw of the library's comes from the seed: the member
	// ids and the jitter (see internal/random). The goroutines' order is
	// left to the runtime.
	defer random.Seed(uint64(opts.Seed))()
	var res Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		res, err = Run(opts, sched)
		if err != nil {
			t.Fatalf("seed %d: %v", opts.Seed, err)
		}
	})
	return res
}

// Shrink removes faults from a failing schedule one at a time, keeping
// each removal after which the run still fails with the same invariant,
// until no single removal does; it returns the smallest schedule found
// and its result. Each try is one more run.
func Shrink(t *testing.T, opts Options, failed Result) (Schedule, Result) {
	t.Helper()
	want := failed.Violations[0].Invariant
	sched, res := failed.Schedule, failed
	for i := 0; i < len(sched); {
		try := sched.Without(i)
		r := Check(t, opts, try)
		if stillFails(r, want) {
			sched, res = try, r
			continue
		}
		i++
	}
	return sched, res
}

func stillFails(r Result, invariant string) bool {
	for _, v := range r.Violations {
		if v.Invariant == invariant {
			return true
		}
	}
	return false
}
