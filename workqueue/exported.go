package workqueue

import (
	"context"
	"sync"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
	"github.com/listwatch/informer/metrics"
)

// UnfinishedWorkPeriod is how often ExportedMetrics.Run updates the two
// gauges of work in progress, which grow with time while no event
// arrives. It is client-go's period.
const UnfinishedWorkPeriod = 500 * time.Millisecond

// The workqueue metrics, as client-go's workqueue exports them to
// Prometheus (k8s.io/component-base/metrics/prometheus/workqueue): the
// same names, units, buckets and one label, "name", the queue's name.
// Histogram buckets run from 10ns to 10s, a factor of 10 apart. Two count
// something narrower than client-go's: retries are AddRateLimited calls
// (client-go counts every AddAfter), and a key added while a worker holds
// it enters depth and starts its queue wait when it is queued at Done
// (client-go counts it at the Add).
var (
	queueLabels   = []string{"name"}
	queueBuckets  = clientGoBuckets()
	descDepth     = metrics.Desc{Name: "workqueue_depth", Labels: queueLabels, Help: "Keys queued and ready for a worker."}
	descAdds      = metrics.Desc{Name: "workqueue_adds_total", Labels: queueLabels, Help: "Times a key entered the queue; adds of a key already queued do not count."}
	descQueueWait = metrics.Desc{Name: "workqueue_queue_duration_seconds", Labels: queueLabels, Buckets: queueBuckets,
		Help: "Seconds a key waited in the queue before a worker took it."}
	descWork = metrics.Desc{Name: "workqueue_work_duration_seconds", Labels: queueLabels, Buckets: queueBuckets,
		Help: "Seconds a worker held a key, from Get to Done."}
	descUnfinished = metrics.Desc{Name: "workqueue_unfinished_work_seconds", Labels: queueLabels,
		Help: "Seconds of work in progress not yet counted in work_duration, summed over the keys held now; it climbs while a worker is stuck."}
	descLongest = metrics.Desc{Name: "workqueue_longest_running_processor_seconds", Labels: queueLabels,
		Help: "Seconds the key held longest has been held by its worker."}
	descRetries = metrics.Desc{Name: "workqueue_retries_total", Labels: queueLabels, Help: "AddRateLimited calls: retries with backoff."}
	// Ours: client-go has no such metric.
	descGaveUp = metrics.Desc{Name: "listwatch_workqueue_gave_up_total", Labels: queueLabels,
		Help: "Keys Run gave up on: a terminal error, or the retry cap reached (listwatch/informer's own metric)."}
)

// clientGoBuckets are client-go's workqueue buckets, 10ns to 10s. The
// arguments are constants that ExponentialBuckets accepts, so it returns no
// error here (TestTheDurationBucketsAreClientGosTenFrom10nsTo10s checks).
func clientGoBuckets() []float64 {
	b, _ := metrics.ExponentialBuckets(10e-9, 10, 10)
	return b
}

// ExportedMetrics turns one queue's trace events into client-go's
// workqueue_* metrics on a metrics.Provider, for a system such as
// Prometheus to scrape. It is the exported twin of [Metrics], which keeps
// the same numbers in memory to print them; both read nothing but events.
//
// Install Hook as the queue's Options.Trace (next to a printer with
// informer.Tee), and Run it, so that the two gauges of work in progress
// move while no event arrives:
//
//	qm, err := workqueue.NewExportedMetrics(registry, "configmaps", nil)
//	q := workqueue.New(workqueue.Options[string]{Trace: qm.Hook()})
//	go qm.Run(ctx)
//
// A nil *ExportedMetrics is valid and exports nothing: its Hook is nil, so
// the queue builds no event, and its Run returns at once.
//
// It keeps the time each queued and each held key arrived, by the key's
// text: memory in proportion to the keys in the queue.
type ExportedMetrics struct {
	depth, unfinished, longest metrics.Gauge
	adds, retries, gaveUp      metrics.Counter
	queueWait, work            metrics.Histogram
	clock                      Clock

	// mu guards the maps. queuedAt holds the Time of each queued key's
	// KindAdded event: a key is in it iff it is queued (client-go keeps
	// the first add's time too). startedAt holds the Time of each held
	// key's KindGot event: a key is in it iff a worker holds it.
	mu        sync.Mutex
	queuedAt  map[string]time.Time
	startedAt map[string]time.Time
	queued    int // the depth: KindAdded minus KindGot events
}

// NewExportedMetrics registers a queue named name with reg and makes its
// series. clock must be the queue's Options.Clock (nil, or a nil pointer
// held in it: the real clock, as [New] takes it), since the in-progress
// gauges compare it with the events' times.
// It returns nil, nil for a nil reg: no metrics. It fails for an empty
// name, a name reg already has (a *metrics.DuplicateError), or a series
// the provider refuses.
func NewExportedMetrics(reg *metrics.Registry, name string, clock Clock) (*ExportedMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	if err := reg.Register("workqueue", name); err != nil {
		return nil, err
	}
	if nilcheck.IsNil(clock) {
		clock = nil // as New takes it: the real clock
	}
	m := &ExportedMetrics{
		clock:     informer.ClockOrReal(clock),
		queuedAt:  map[string]time.Time{},
		startedAt: map[string]time.Time{},
	}
	values := []string{name}
	var err error
	gauge := func(d metrics.Desc) metrics.Gauge {
		var g metrics.Gauge
		if err == nil {
			g, err = reg.Gauge(d, values)
		}
		return g
	}
	counter := func(d metrics.Desc) metrics.Counter {
		var c metrics.Counter
		if err == nil {
			c, err = reg.Counter(d, values)
		}
		return c
	}
	histogram := func(d metrics.Desc) metrics.Histogram {
		var h metrics.Histogram
		if err == nil {
			h, err = reg.Histogram(d, values)
		}
		return h
	}
	m.depth, m.unfinished, m.longest = gauge(descDepth), gauge(descUnfinished), gauge(descLongest)
	m.adds, m.retries, m.gaveUp = counter(descAdds), counter(descRetries), counter(descGaveUp)
	m.queueWait, m.work = histogram(descQueueWait), histogram(descWork)
	if err != nil {
		reg.Unregister("workqueue", name) // nothing uses the name: free it
		return nil, err
	}
	return m, nil
}

// Hook returns the trace hook to install as the queue's Options.Trace: nil
// for a nil m.
func (m *ExportedMetrics) Hook() informer.TraceHook {
	if m == nil {
		return nil
	}
	return m.observe
}

// observe updates the metrics from one event. Events of other stages, and
// kinds that change no metric, are ignored.
func (m *ExportedMetrics) observe(e informer.TraceEvent) {
	if e.Stage != informer.StageWorkqueue {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e.Kind {
	case KindAdded:
		m.adds.Add(1)
		m.queued++
		m.depth.Set(float64(m.queued))
		m.queuedAt[e.Key] = e.Time
	case KindGot:
		m.queued--
		m.depth.Set(float64(m.queued))
		if at, ok := m.queuedAt[e.Key]; ok {
			m.queueWait.Observe(e.Time.Sub(at).Seconds())
			delete(m.queuedAt, e.Key)
		}
		m.startedAt[e.Key] = e.Time
	case KindDone:
		if at, ok := m.startedAt[e.Key]; ok {
			m.work.Observe(e.Time.Sub(at).Seconds())
			delete(m.startedAt, e.Key)
		}
	case KindRequeued:
		m.retries.Add(1)
	case KindGaveUp:
		m.gaveUp.Add(1)
	}
}

// Run updates the two in-progress gauges every UnfinishedWorkPeriod of
// the clock until ctx ends, and once more as it starts. It starts no
// goroutine that outlives it; a nil m returns at once.
func (m *ExportedMetrics) Run(ctx context.Context) {
	if m == nil {
		return
	}
	tick := make(chan struct{}, 1)
	for {
		m.updateInProgress()
		t := m.clock.AfterFunc(UnfinishedWorkPeriod, func() {
			select {
			case tick <- struct{}{}:
			default:
			}
		})
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tick:
		}
	}
}

// updateInProgress sets the unfinished-work and longest-running gauges
// from the held keys' start times, as of the clock's now.
func (m *ExportedMetrics) updateInProgress() {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var total, longest time.Duration
	for _, at := range m.startedAt {
		held := now.Sub(at)
		total += held
		longest = max(longest, held)
	}
	m.unfinished.Set(total.Seconds())
	m.longest.Set(longest.Seconds())
}
