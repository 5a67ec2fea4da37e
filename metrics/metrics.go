package metrics

import (
	"fmt"
	"math"
)

// Desc describes one metric family: every series of it shares the name,
// the help text, the label names and, for a histogram, the buckets. A
// Provider sees each Desc many times, once per label values, always equal.
type Desc struct {
	// Name is the full name, such as "workqueue_adds_total". Counters end
	// in _total; durations are in seconds and end in _seconds.
	Name string
	// Help says what the metric counts, in one sentence.
	Help string
	// Labels are the label names, in the order label values are given.
	// They are bounded by design: the name of a queue or an informer,
	// never an object's key, namespace or resourceVersion.
	Labels []string
	// Buckets are a histogram's upper bounds, ascending; nil otherwise.
	Buckets []float64
}

// Counter only goes up: adds, retries, relists.
type Counter interface {
	// Add adds delta, which is never negative.
	Add(delta float64)
}

// Gauge goes up and down: a queue's depth, the objects in a cache.
type Gauge interface {
	// Set sets the gauge's value.
	Set(value float64)
}

// Histogram counts observations into buckets: durations.
type Histogram interface {
	// Observe records one observation.
	Observe(value float64)
}

// Provider makes the series that informers and queues update: the one
// thing an adapter for a metrics system (Prometheus, OpenTelemetry, an
// in-memory table) implements. Each method returns the series of d with
// the given label values, one per label name, in d.Labels' order; asked
// twice for the same d and values, it may return the same series or a
// second handle on it.
//
// The library calls these methods while it builds an informer's or a
// queue's metrics, and, for series whose label values appear only later
// (one per event handler), from the goroutine of the stage that emits the
// trace event, so they must be safe for concurrent use. The series they
// return are updated from the emitting goroutines too, and must be safe
// for concurrent use.
//
// An error says the series cannot exist, such as a name that another
// metric with other labels already has; the library passes it on.
type Provider interface {
	Counter(d Desc, labelValues []string) (Counter, error)
	Gauge(d Desc, labelValues []string) (Gauge, error)
	Histogram(d Desc, labelValues []string) (Histogram, error)
}

// ExponentialBuckets returns count upper bounds, the first start and each
// next one factor times the previous, as Prometheus' function of the same
// name computes them. Where Prometheus panics, it returns an error naming
// the argument that makes no buckets: a start that is not a finite number
// above 0, a factor that is not a finite number above 1, a count below 1,
// or a count so large that the last bound overflows to +Inf.
func ExponentialBuckets(start, factor float64, count int) ([]float64, error) {
	switch {
	case !(start > 0) || math.IsInf(start, 1): // !(x > 0) is true for NaN too
		return nil, fmt.Errorf("metrics: ExponentialBuckets: start %v must be a finite number above 0", start)
	case !(factor > 1) || math.IsInf(factor, 1):
		return nil, fmt.Errorf("metrics: ExponentialBuckets: factor %v must be a finite number above 1", factor)
	case count < 1:
		return nil, fmt.Errorf("metrics: ExponentialBuckets: count %d must be at least 1", count)
	}
	b := make([]float64, count)
	for i := range b {
		b[i] = start
		start *= factor
	}
	if math.IsInf(b[count-1], 1) {
		return nil, fmt.Errorf("metrics: ExponentialBuckets: count %d is too many: %v times %v to the power %d overflows", count, b[0], factor, count-1)
	}
	return b, nil
}
