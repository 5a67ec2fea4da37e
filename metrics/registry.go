package metrics

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Registry is what informers and queues are given to export metrics: a
// Provider, and the identities already registered with it. Two queues
// with one name, or two informers with one name and resource, would write
// the same series, and each would overwrite the other's gauges; so the
// second registration is an error, a *DuplicateError.
//
// A nil *Registry means "no metrics": the constructors that take one
// (workqueue.NewExportedMetrics, sharedinformer.NewExportedMetrics) then
// return nil, whose trace hook is nil, and tracing stays free.
//
// Registrations last as long as the Registry: use one per process (or
// per test), not one per informer.
type Registry struct {
	provider Provider

	mu sync.Mutex
	// taken holds each registered identity: kind, then label values,
	// joined by "\x00". Guarded by mu.
	taken map[string]bool
}

// NewRegistry returns a Registry that makes its series with p.
func NewRegistry(p Provider) (*Registry, error) {
	if p == nil {
		return nil, errors.New("metrics: NewRegistry: the Provider is nil")
	}
	return &Registry{provider: p, taken: map[string]bool{}}, nil
}

// Provider returns the Provider the Registry was made with.
func (r *Registry) Provider() Provider { return r.provider }

// Register claims an identity: what registers ("workqueue", "informer"),
// with its label values in order, which must not be empty and must not
// have been registered before with this Registry.
func (r *Registry) Register(kind string, labelValues ...string) error {
	if kind == "" {
		return errors.New("metrics: Register: the kind is empty")
	}
	if len(labelValues) == 0 || labelValues[0] == "" {
		return fmt.Errorf("metrics: Register: the %s has no name", kind)
	}
	id := identity(kind, labelValues)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.taken[id] {
		return &DuplicateError{Kind: kind, LabelValues: labelValues}
	}
	r.taken[id] = true
	return nil
}

// Unregister gives an identity back, so that it can be registered again:
// for an informer or a queue whose construction failed after it claimed
// its name. The series already made with the Provider stay; registering
// the identity again reuses them.
func (r *Registry) Unregister(kind string, labelValues ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.taken, identity(kind, labelValues))
}

// identity is the key of an identity in taken.
func identity(kind string, labelValues []string) string {
	return kind + "\x00" + strings.Join(labelValues, "\x00")
}

// DuplicateError says that a queue or an informer was registered under an
// identity that another already has.
type DuplicateError struct {
	Kind        string   // "workqueue", "informer", "guard" or "sharder"
	LabelValues []string // the identity: name first, then the rest
}

// Error names the duplicate and says what to do.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("metrics: %s %q is registered twice with one Registry (label values %q): give each its own name",
		e.Kind, e.LabelValues[0], e.LabelValues)
}

// Counter makes a series with the Provider, naming the metric in the
// error if it fails.
func (r *Registry) Counter(d Desc, labelValues []string) (Counter, error) {
	c, err := r.provider.Counter(d, labelValues)
	return c, wrap(d, err)
}

// Gauge makes a series with the Provider, as Counter does.
func (r *Registry) Gauge(d Desc, labelValues []string) (Gauge, error) {
	g, err := r.provider.Gauge(d, labelValues)
	return g, wrap(d, err)
}

// Histogram makes a series with the Provider, as Counter does.
func (r *Registry) Histogram(d Desc, labelValues []string) (Histogram, error) {
	h, err := r.provider.Histogram(d, labelValues)
	return h, wrap(d, err)
}

func wrap(d Desc, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("metrics: %s: %w", d.Name, err)
}
