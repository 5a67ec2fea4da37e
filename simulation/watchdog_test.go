//go:build simsweep

package simulation_test

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// watchSeed watches one seed's run from outside its bubble, in real
// time, and panics with every goroutine's stack when the run has lasted
// longer than maxReal or the process's heap has grown past maxHeap. A
// goroutine that never blocks keeps simulated time still, so no
// invariant of the run can report it; one that also allocates fills the
// machine's memory first (a crds sweep's process was killed by the
// kernel at 12.7 GB, its seed unknown, before the real-time bound came).
// A seed's heap stays far below either bound (a process holds under
// 100 MB, about five times that with garbage at GOGC=400, and up to its
// 1 GiB GOMEMLIMIT at hack/sim.sh's GOGC=off). stop ends the watch.
func watchSeed(seed int64, scenario string, maxReal time.Duration, maxHeap uint64) (stop func()) {
	done := make(chan struct{})
	go func() {
		start := time.Now()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(heap)
			why := ""
			switch {
			case time.Since(start) > maxReal:
				why = fmt.Sprintf("still runs after %v of real time: a goroutine that never blocks keeps simulated time still", maxReal)
			case heap[0].Value.Uint64() > maxHeap:
				why = fmt.Sprintf("has grown the heap to %d MiB, past the sweep's bound of %d MiB: something allocates without end", heap[0].Value.Uint64()>>20, maxHeap>>20)
			default:
				continue
			}
			debug.SetTraceback("all")
			panic(fmt.Sprintf("seed %d of scenario %s %s (replay: -seed=%d)", seed, scenario, why, seed))
		}
	}()
	return func() { close(done) }
}
