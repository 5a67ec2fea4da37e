package workqueue

import (
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/informer"
)

// Metrics computes a queue's metrics from its trace events and nothing
// else, so the numbers and the trace cannot disagree. Install Observe as
// the queue's Options.Trace, or next to a printer with [informer.Tee].
//
// They are the metrics client-go's workqueue exports to Prometheus
// (workqueue_depth, _adds_total, _queue_duration_seconds,
// _work_duration_seconds, _retries_total,
// _longest_running_processor_seconds, _unfinished_work_seconds), kept in
// memory so that an example or a test can print them. Two count something
// narrower than client-go's: Retries counts AddRateLimited calls only
// (client-go counts every AddAfter), and a key added while a worker holds
// it enters Depth, and starts its queue wait, when Done queues it
// (client-go counts it at the Add).
//
// Give each queue its own Metrics: events carry no queue name, so two
// queues observed by one Metrics are counted as one. Keys are told apart
// by their text (fmt.Sprint), so key values that print alike count as one
// key.
//
// A Metrics is safe for concurrent use. Create one with [NewMetrics].
type Metrics struct {
	// mu guards every field below.
	mu sync.Mutex

	depth, adds, retries, failures int
	queueWait, work                DurationStats

	// queuedAt holds the Time of each queued key's KindAdded event: a key
	// is in it iff it is queued. startedAt holds the Time of each held
	// key's KindGot event: a key is in it iff a worker holds it.
	queuedAt  map[string]time.Time
	startedAt map[string]time.Time
}

// NewMetrics returns a Metrics that has seen no events.
func NewMetrics() *Metrics {
	return &Metrics{queuedAt: map[string]time.Time{}, startedAt: map[string]time.Time{}}
}

// Observe updates the metrics from one event; it is an [informer.TraceHook].
// Events of other stages, and kinds that change no metric, are ignored.
func (m *Metrics) Observe(e informer.TraceEvent) {
	if e.Stage != informer.StageWorkqueue {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e.Kind {
	case KindAdded:
		m.adds++
		m.depth++
		m.queuedAt[e.Key] = e.Time
	case KindGot:
		m.depth--
		if at, ok := m.queuedAt[e.Key]; ok {
			m.queueWait.add(e.Time.Sub(at))
			delete(m.queuedAt, e.Key)
		}
		m.startedAt[e.Key] = e.Time
	case KindDone:
		if at, ok := m.startedAt[e.Key]; ok {
			m.work.add(e.Time.Sub(at))
			delete(m.startedAt, e.Key)
		}
	case KindRequeued:
		m.retries++
	case KindFailed, KindPanicked, KindGaveUp:
		m.failures++
	}
}

// Snapshot returns the metrics as of now. The two gauges of work in
// progress, LongestRunning and UnfinishedWork, grow with time while no
// event arrives, so they need now; pass the queue's clock's time.
func (m *Metrics) Snapshot(now time.Time) MetricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := MetricsSnapshot{
		Depth: m.depth, Adds: m.adds, Retries: m.retries, Failures: m.failures,
		QueueWait: m.queueWait, WorkDuration: m.work, Processing: len(m.startedAt),
	}
	for _, at := range m.startedAt {
		held := now.Sub(at)
		s.UnfinishedWork += held
		s.LongestRunning = max(s.LongestRunning, held)
	}
	return s
}

// MetricsSnapshot is the state of a [Metrics] at one moment.
type MetricsSnapshot struct {
	Depth   int // keys queued, ready for a worker (the queue's Len)
	Adds    int // times a key entered the queue (deduplicated adds do not count)
	Retries int // AddRateLimited calls (KindRequeued events)
	// Failures counts, under Run, the reconciles that returned an error
	// (terminal or not; not ctx's end once ctx is done) or panicked, and
	// the Gate Holds that panicked, each a failure of its key (see Run).
	Failures     int
	QueueWait    DurationStats // from a key's KindAdded to its KindGot
	WorkDuration DurationStats // from a key's KindGot to its KindDone
	Processing   int           // keys held by workers
	// LongestRunning is how long the key held longest has been held: a
	// reconcile that is stuck shows here long before its work duration.
	LongestRunning time.Duration
	// UnfinishedWork is the total time the keys held now have been held.
	UnfinishedWork time.Duration
}

// String formats the snapshot on three lines, for examples and logs.
func (s MetricsSnapshot) String() string {
	return fmt.Sprintf("depth %d, adds %d, retries %d, failures %d\n"+
		"queue wait: %v; work duration: %v\n"+
		"processing %d, longest running %v, unfinished work %v",
		s.Depth, s.Adds, s.Retries, s.Failures, s.QueueWait, s.WorkDuration,
		s.Processing, s.LongestRunning, s.UnfinishedWork)
}

// DurationStats summarizes observed durations: a small, fixed-size
// stand-in for a histogram.
type DurationStats struct {
	Count int
	Total time.Duration
	Max   time.Duration
}

func (s *DurationStats) add(d time.Duration) {
	s.Count++
	s.Total += d
	s.Max = max(s.Max, d)
}

// Mean returns Total/Count, or 0 when nothing was observed.
func (s DurationStats) Mean() time.Duration {
	if s.Count == 0 {
		return 0
	}
	return s.Total / time.Duration(s.Count)
}

// String formats the stats as "3 × mean 1.5s, max 2s".
func (s DurationStats) String() string {
	return fmt.Sprintf("%d × mean %v, max %v", s.Count, s.Mean(), s.Max)
}
