package metrics

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Memory is a Provider that keeps every series in memory and prints them:
// for tests, examples and `// Output:` lines, where a metrics system would
// be too much. It checks what Prometheus checks: one Desc (help, label
// names, buckets) and one kind per name, whatever the label values, and
// as many label values as label names.
//
// A Memory is safe for concurrent use. Create one with NewMemory.
type Memory struct {
	mu sync.Mutex
	// descs holds the Desc of each name seen, and kinds its kind; series
	// every series made, by name and label values. Guarded by mu, as are
	// the series' values.
	descs  map[string]Desc
	kinds  map[string]string
	series map[string]*memorySeries
}

// memorySeries is one series. For a counter or a gauge, value is its
// value; for a histogram, value is the sum of observations and count their
// number.
type memorySeries struct {
	m     *Memory
	kind  string
	value float64
	count uint64
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{descs: map[string]Desc{}, kinds: map[string]string{}, series: map[string]*memorySeries{}}
}

// Counter returns the counter of d with labelValues, made at the first call.
func (m *Memory) Counter(d Desc, labelValues []string) (Counter, error) {
	return m.make("counter", d, labelValues)
}

// Gauge returns the gauge of d with labelValues, made at the first call.
func (m *Memory) Gauge(d Desc, labelValues []string) (Gauge, error) {
	return m.make("gauge", d, labelValues)
}

// Histogram returns the histogram of d with labelValues, made at the
// first call. It keeps the count and sum of observations, not buckets.
func (m *Memory) Histogram(d Desc, labelValues []string) (Histogram, error) {
	return m.make("histogram", d, labelValues)
}

// make returns the series of d with labelValues, creating it if new.
func (m *Memory) make(kind string, d Desc, labelValues []string) (*memorySeries, error) {
	if d.Name == "" {
		return nil, fmt.Errorf("a %s needs a name", kind)
	}
	if len(labelValues) != len(d.Labels) {
		return nil, fmt.Errorf("%d label values for %d labels %v", len(labelValues), len(d.Labels), d.Labels)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.descs[d.Name]; ok {
		switch {
		case !slices.Equal(old.Labels, d.Labels):
			return nil, fmt.Errorf("already made with labels %v, now asked with %v", old.Labels, d.Labels)
		case m.kinds[d.Name] != kind:
			return nil, fmt.Errorf("already made as a %s, now asked for a %s", m.kinds[d.Name], kind)
		case old.Help != d.Help:
			return nil, fmt.Errorf("already made with help %q, now asked with %q", old.Help, d.Help)
		case !slices.Equal(old.Buckets, d.Buckets):
			return nil, fmt.Errorf("already made with buckets %v, now asked with %v", old.Buckets, d.Buckets)
		}
	}
	m.descs[d.Name], m.kinds[d.Name] = d, kind
	id := seriesID(d.Name, d.Labels, labelValues)
	s, ok := m.series[id]
	if !ok {
		s = &memorySeries{m: m, kind: kind}
		m.series[id] = s
	}
	return s, nil
}

// seriesID formats a series as Prometheus does: name{a="x",b="y"}.
func seriesID(name string, labels, values []string) string {
	if len(labels) == 0 {
		return name
	}
	pairs := make([]string, len(labels))
	for i := range labels {
		pairs[i] = fmt.Sprintf("%s=%q", labels[i], values[i])
	}
	return name + "{" + strings.Join(pairs, ",") + "}"
}

func (s *memorySeries) Add(delta float64) { s.m.mu.Lock(); s.value += delta; s.m.mu.Unlock() }
func (s *memorySeries) Set(value float64) { s.m.mu.Lock(); s.value = value; s.m.mu.Unlock() }
func (s *memorySeries) Observe(value float64) {
	s.m.mu.Lock()
	s.value += value
	s.count++
	s.m.mu.Unlock()
}

// Value returns a counter's or a gauge's value, or a histogram's number of
// observations, and whether the series exists. labelValues follow the
// order of the Desc's labels.
func (m *Memory) Value(name string, labelValues ...string) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.descs[name]
	if !ok || len(labelValues) != len(d.Labels) {
		return 0, false
	}
	s, ok := m.series[seriesID(name, d.Labels, labelValues)]
	if !ok {
		return 0, false
	}
	if s.kind == "histogram" {
		return float64(s.count), true
	}
	return s.value, true
}

// Sum returns a histogram's sum of observations, and whether the series
// exists and is a histogram.
func (m *Memory) Sum(name string, labelValues ...string) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.descs[name]
	if !ok || len(labelValues) != len(d.Labels) {
		return 0, false
	}
	s, ok := m.series[seriesID(name, d.Labels, labelValues)]
	if !ok || s.kind != "histogram" {
		return 0, false
	}
	return s.value, true
}

// String lists every series, one a line, sorted: a counter or a gauge
// with its value, a histogram with its count (its sum varies with time).
func (m *Memory) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	lines := make([]string, 0, len(m.series))
	for id, s := range m.series {
		switch s.kind {
		case "histogram":
			lines = append(lines, fmt.Sprintf("%s count=%d", id, s.count))
		default:
			lines = append(lines, fmt.Sprintf("%s %g", id, s.value))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
