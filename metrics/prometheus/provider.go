package prometheus

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/informer/metrics"
)

// Provider is a metrics.Provider that makes each metric family a
// Prometheus vector (CounterVec, GaugeVec, HistogramVec), registered with
// a Registerer the first time its Desc is seen, and each series that
// vector's child for the label values.
type Provider struct {
	reg prom.Registerer

	mu       sync.Mutex
	families map[string]family // by metric name; guarded by mu
}

// family is one metric family the Provider made: the Desc it was made
// from, what kind of metric it is, and its vector.
type family struct {
	desc metrics.Desc
	kind string // "counter", "gauge" or "histogram"
	vec  prom.Collector
}

// New returns a Provider that registers its vectors with reg, such as a
// *prometheus.Registry or prometheus.DefaultRegisterer.
func New(reg prom.Registerer) (*Provider, error) {
	if reg == nil {
		return nil, errors.New("prometheus: New: the Registerer is nil; pass a prometheus.NewRegistry() or prometheus.DefaultRegisterer")
	}
	return &Provider{reg: reg, families: map[string]family{}}, nil
}

// Counter returns the child of d's CounterVec for the label values.
func (p *Provider) Counter(d metrics.Desc, labelValues []string) (metrics.Counter, error) {
	vec, err := vectorFor(p, d, "counter", func() *prom.CounterVec {
		return prom.NewCounterVec(prom.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(labelValues...)
}

// Gauge returns the child of d's GaugeVec for the label values.
func (p *Provider) Gauge(d metrics.Desc, labelValues []string) (metrics.Gauge, error) {
	vec, err := vectorFor(p, d, "gauge", func() *prom.GaugeVec {
		return prom.NewGaugeVec(prom.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(labelValues...)
}

// Histogram returns the child of d's HistogramVec for the label values.
// d.Buckets are its upper bounds (Prometheus' defaults if nil).
func (p *Provider) Histogram(d metrics.Desc, labelValues []string) (metrics.Histogram, error) {
	vec, err := vectorFor(p, d, "histogram", func() *prom.HistogramVec {
		return prom.NewHistogramVec(prom.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: d.Buckets}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(labelValues...)
}

// vectorFor returns the vector of the family d names, making it with
// newVec and registering it the first time. It refuses a Desc whose shape
// differs from the one the family was made with.
func vectorFor[V prom.Collector](p *Provider, d metrics.Desc, kind string, newVec func() V) (V, error) {
	var zero V
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.families[d.Name]; ok {
		if f.kind != kind || !sameShape(f.desc, d) {
			return zero, fmt.Errorf("prometheus: %s was made as a %s with help %q, labels %q and buckets %v; now asked for as a %s with help %q, labels %q and buckets %v",
				d.Name, f.kind, f.desc.Help, f.desc.Labels, f.desc.Buckets, kind, d.Help, d.Labels, d.Buckets)
		}
		return f.vec.(V), nil
	}
	v := newVec()
	if err := p.reg.Register(v); err != nil {
		// Another Provider over the same Registerer made this family with
		// the same name, help and labels (Prometheus compares those): share
		// its vector if it is of the same kind.
		var already prom.AlreadyRegisteredError
		existing, ok := zero, false
		if errors.As(err, &already) {
			existing, ok = already.ExistingCollector.(V)
		}
		if !ok {
			return zero, fmt.Errorf("prometheus: registering %s %s: %w", kind, d.Name, err)
		}
		v = existing
	}
	p.families[d.Name] = family{desc: d, kind: kind, vec: v}
	return v, nil
}

// sameShape reports whether a and b describe one family: the same name,
// help, label names and buckets.
func sameShape(a, b metrics.Desc) bool {
	return a.Name == b.Name && a.Help == b.Help && slices.Equal(a.Labels, b.Labels) && slices.Equal(a.Buckets, b.Buckets)
}
