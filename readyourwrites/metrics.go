package readyourwrites

import (
	"sync"
	"time"

	"github.com/listwatch/informer/metrics"
)

// The guard's metrics, labelled with its Name.
var (
	holdBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

	descHeld = metrics.Desc{Name: "listwatch_guard_held_total", Labels: []string{"name"},
		Help: "Keys held back before their reconcile because a write of theirs was not yet in the cache."}
	descHoldTime = metrics.Desc{Name: "listwatch_guard_hold_duration_seconds", Labels: []string{"name"}, Buckets: holdBuckets,
		Help: "How long a held key waited for the cache, until it caught up or MaxHold passed."}
	descStale = metrics.Desc{Name: "listwatch_guard_stale_reconciles_total", Labels: []string{"name"},
		Help: "Reconciles run after MaxHold on a cache that had not yet shown the key's own writes."}
	descPending = metrics.Desc{Name: "listwatch_guard_pending_writes", Labels: []string{"name"},
		Help: "Recorded writes not yet known to be in their caches."}
)

// guardMetrics are one guard's series; a nil one counts nothing. Its
// series outlive it: the next guard of its name (the next term's) takes
// them over, so a closed guard's count nothing more (off), and a new
// guard starts with no pending writes. mu makes the check of off and the
// write one step, so that no write of the closed guard's lands after
// unregister.
type guardMetrics struct {
	reg      *metrics.Registry
	name     string
	holds    metrics.Counter
	holdTime metrics.Histogram
	stale    metrics.Counter
	pending  metrics.Gauge
	mu       sync.Mutex
	off      bool // set by unregister; guarded by mu
}

// newGuardMetrics registers the guard name with reg: nil, nil for a nil
// reg.
func newGuardMetrics(reg *metrics.Registry, name string) (*guardMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	if err := reg.Register("guard", name); err != nil {
		return nil, err
	}
	m := &guardMetrics{reg: reg, name: name}
	var err, e error
	values := []string{name}
	if m.holds, e = reg.Counter(descHeld, values); e != nil && err == nil {
		err = e
	}
	if m.holdTime, e = reg.Histogram(descHoldTime, values); e != nil && err == nil {
		err = e
	}
	if m.stale, e = reg.Counter(descStale, values); e != nil && err == nil {
		err = e
	}
	if m.pending, e = reg.Gauge(descPending, values); e != nil && err == nil {
		err = e
	}
	if err != nil {
		reg.Unregister("guard", name)
		return nil, err
	}
	m.pending.Set(0) // not the last guard's of this name
	return m, nil
}

// unregister gives the name back; the guard's metrics count nothing
// more.
func (m *guardMetrics) unregister() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.off {
		m.off = true
		m.pending.Set(0)
		m.reg.Unregister("guard", m.name)
	}
}

// count runs write unless m is nil or its guard closed.
func (m *guardMetrics) count(write func()) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.off {
		write()
	}
}

func (m *guardMetrics) held() {
	m.count(func() { m.holds.Add(1) })
}

func (m *guardMetrics) released(after time.Duration) {
	m.count(func() { m.holdTime.Observe(after.Seconds()) })
}

func (m *guardMetrics) ranStale(after time.Duration) {
	m.count(func() {
		m.stale.Add(1)
		m.holdTime.Observe(after.Seconds())
	})
}

func (m *guardMetrics) setPending(n int) {
	m.count(func() { m.pending.Set(float64(n)) })
}
