package reflector

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/listwatch/informer"
)

// Options configure a Reflector. ListerWatcher and Store are required;
// every other field has the default its comment gives, used when the field
// is left zero. What to mirror and where to put it are here; how to list,
// watch and retry is in Tuning, the part an informer lets you set.
type Options[T informer.Object] struct {
	// ListerWatcher is the collection to mirror. Required.
	ListerWatcher ListerWatcher[T]
	// Store receives the mirror's changes. Required.
	Store Store[T]

	// Name identifies the reflector in errors and logs. Default: what the
	// ListerWatcher says it lists if it is a fmt.Stringer (a
	// RESTListerWatcher says "configmaps in namespace shop, labels
	// app=web"), otherwise T's Go type, such as "*v1.ConfigMap".
	Name string

	// Tuning holds the knobs of listing, watching and retrying; its fields
	// are promoted, so opts.PageSize reads as if declared here.
	Tuning

	// ResyncPeriod is how often the store's Resync is called once the
	// first list is in; 0 means never. Resync makes no API call. Default: 0.
	ResyncPeriod time.Duration
	// Clock times the resync ticks. Default: informer.RealClock; tests
	// pass a fake one (workqueue.FakeClock) to resync without waiting.
	Clock informer.Clock

	// Trace receives a trace event for every step (see the Kind constants).
	// Default: nil, no tracing, and no cost.
	Trace informer.TraceHook
	// Served, if set, is asked after a LIST or WATCH failed with 404 Not
	// Found, or brought an object that is not a T (the resource may hold
	// another kind now: Serving.OtherKind), whether the server still
	// serves the resource, as its
	// discovery says (see Serving). It should ask the server, not a cache
	// older than the 404, and may share its answer with other reflectors
	// for a moment (a sharedinformer.Factory's does, for a second), except
	// right after it answered "gone": the reflector asks again
	// BackoffInitial later, with a context for which SecondLook is true,
	// and believes "gone" only if that answer, which must come from
	// requests made after the first, says it too. When
	// the answer is not Served, the reflector stops listing and watching
	// and asks Served again after each backoff until it is, then lists
	// from scratch. Meanwhile, if no version of the resource is served
	// (the resource is gone), it reports ErrNotServed once and empties
	// the store; if another version is (Serving.Elsewhere: the version
	// moved, which deletes nothing), it reports a *VersionNotServedError
	// once and keeps the store as it is, unwatched, so that nothing reads
	// as deleted (nor is a deletion since seen). An error from
	// Served counts as served: the 404 is retried as any failure is (a
	// watch event of another type still ends its watch and relists,
	// cause other-kind: the list tells).
	// Default: nil, every 404 is retried.
	Served func(ctx context.Context) (Serving, error)
	// OnError receives every failure as an *Error before the reflector
	// retries, including the expected ones (a 410 Gone that causes a
	// relist). It runs on the reflector's goroutine and must be quick.
	// Default: log it with slog.Default at level Warn.
	OnError func(err error)
}

// withDefaults returns o with every zero field set to its default.
func (o Options[T]) withDefaults() Options[T] {
	if o.Name == "" {
		if s, ok := o.ListerWatcher.(fmt.Stringer); ok {
			o.Name = s.String()
		} else {
			var zero T
			o.Name = fmt.Sprintf("%T", zero)
		}
	}
	o.Tuning = o.Tuning.withDefaults()
	o.Clock = informer.ClockOrReal(o.Clock)
	if o.OnError == nil {
		name := o.Name
		o.OnError = func(err error) { slog.Warn("reflector failed; retrying", "reflector", name, "err", err) }
	}
	return o
}
