package sharedinformer

import (
	"errors"
	"fmt"

	"github.com/listwatch/informer"
)

// TransformError reports an object the transform rejected (returned an
// error or nil for). It goes to Options.OnError; the trace has a
// KindTransformRejected event with the same key and resourceVersion.
type TransformError struct {
	Key             informer.Key
	ResourceVersion string
	Err             error
}

// Error names the object, its version and why it was rejected.
func (e *TransformError) Error() string {
	return fmt.Sprintf("sharedinformer: the transform rejected %s at resourceVersion %s: %v", e.Key, e.ResourceVersion, e.Err)
}

// Unwrap returns the transform's error.
func (e *TransformError) Unwrap() error { return e.Err }

// transformed applies the transform, if one is set, to obj, and shares
// the values the object it keeps repeats with the objects cached before
// it (see interner). A rejection is reported (OnError and the trace) and
// returned as a *TransformError.
//
// The one rule for a rejected object, on the watch path and on a relist
// alike: it does not enter the DeltaFIFO, so the cache keeps the version
// of it that it had, if any, and no handler hears of it. Two invariants
// follow: a rejection is never a delete of an object the server still has,
// and every rejection is reported with its key and resourceVersion.
func (s *store[T]) transformed(obj T) (T, error) {
	if s.transform == nil {
		s.shared.share(obj)
		return obj, nil
	}
	out, err := s.transform(obj)
	if err == nil && informer.IsNil(out) {
		err = errors.New("the transform returned nil")
	}
	if err == nil {
		s.shared.share(out)
		return out, nil
	}
	key, _ := informer.KeyOf(obj)
	rejected := &TransformError{Key: key, ResourceVersion: obj.GetResourceVersion(), Err: err}
	s.i.opts.Trace.Emit(informer.TraceEvent{Stage: informer.StageFIFO, Kind: KindTransformRejected,
		Key: key.String(), ResourceVersion: rejected.ResourceVersion, Detail: err.Error()})
	s.i.report(rejected)
	return out, rejected
}
