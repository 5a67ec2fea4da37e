package scale

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// LiveHeap is the live heap after two full collections (the second frees
// what finalizers of the first released): what the process holds.
// Exported for the harnesses beside the ladder (bench/cmd/syncpair).
func LiveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}

// PeakSampler records the largest live heap the garbage collector marked
// (runtime/metrics /gc/heap/live:bytes) while it runs. It reads what each
// collection found live, not the heap including garbage not yet
// collected, so the peak is what the process had to hold, not when the
// collector happened to run (which GOGC decides).
type PeakSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

const liveHeapMetric = "/gc/heap/live:bytes"

// StartPeakSampler samples the live heap every period until Stop.
func StartPeakSampler(every time.Duration) *PeakSampler {
	s := &PeakSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sample := []metrics.Sample{{Name: liveHeapMetric}}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Stop ends the sampling, takes a last sample after a collection (so the
// end state counts too) and returns the peak in bytes.
func (s *PeakSampler) Stop() float64 {
	runtime.GC()
	close(s.stop)
	<-s.done
	return float64(s.peak.Load())
}
