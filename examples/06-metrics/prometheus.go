package main

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/informer/metrics"
)

// promProvider is a metrics.Provider over a Prometheus registry: the whole
// adapter. Each metric family is one Prometheus vector, made and
// registered the first time its Desc is seen; each series is that
// vector's child for the label values.
type promProvider struct {
	reg *prometheus.Registry

	mu   sync.Mutex
	vecs map[string]prometheus.Collector // by metric name; guarded by mu
}

func newPromProvider(reg *prometheus.Registry) *promProvider {
	return &promProvider{reg: reg, vecs: map[string]prometheus.Collector{}}
}

func (p *promProvider) Counter(d metrics.Desc, values []string) (metrics.Counter, error) {
	vec, err := family(p, d, func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(values...)
}

func (p *promProvider) Gauge(d metrics.Desc, values []string) (metrics.Gauge, error) {
	vec, err := family(p, d, func() *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(values...)
}

func (p *promProvider) Histogram(d metrics.Desc, values []string) (metrics.Histogram, error) {
	vec, err := family(p, d, func() *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: d.Buckets}, d.Labels)
	})
	if err != nil {
		return nil, err
	}
	return vec.GetMetricWithLabelValues(values...)
}

// family returns the vector named d.Name, making and registering it with
// newVec the first time. Registering checks what Prometheus checks: a
// second family of one name with other labels is an error.
func family[V prometheus.Collector](p *promProvider, d metrics.Desc, newVec func() V) (V, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.vecs[d.Name]; ok {
		if v, ok := c.(V); ok {
			return v, nil
		}
	}
	v := newVec()
	if err := p.reg.Register(v); err != nil {
		var zero V
		return zero, err
	}
	p.vecs[d.Name] = v
	return v, nil
}
