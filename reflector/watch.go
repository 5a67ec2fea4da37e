package reflector

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
	"github.com/listwatch/informer/internal/random"
)

// watch runs the watching phase: open a WATCH from the last synced
// resourceVersion (unless a streaming list left one open) and give each
// event to the store until the watch ends.
//
// How it ends decides what follows:
//
//   - closed after lasting ShortWatch, or sooner but having moved the
//     resourceVersion forward: the server's timeout or a cut connection;
//     watch again at once from the last resourceVersion (within the
//     re-watch rate limit). Nothing was missed, so there is no relist.
//   - closed sooner without moving the resourceVersion: a failure
//     (ErrShortWatch); watch again after the backoff.
//   - an event older than the last resourceVersion: skipped, and a
//     consistent relist after the backoff (ErrResourceVersionWentBack).
//   - an ERROR event or a failed request, 410 Gone: the resourceVersion is
//     too old; relist consistently, at once (see afterExpired).
//   - "too large": the server is behind the resourceVersion; relist
//     consistently after the backoff, which gives it time to catch up.
//   - any other ERROR event or failed request: watch again from the same
//     resourceVersion after the backoff.
func (r *Reflector[T]) watch(ctx context.Context, s state) (state, error) {
	rv := r.LastSyncResourceVersion()
	w := s.open
	if w == nil {
		if r.rewatch.Wait(ctx) != nil {
			// ctx ended, or will before a token comes (Wait says so at
			// once): either way no watch opens before it ends.
			<-ctx.Done()
			return state{phase: watching}, nil
		}
		var err error
		if w, err = r.openWatch(ctx, r.watchOptions(rv)); err != nil {
			return r.watchFailed(rv, err)
		}
		r.emit(KindWatch, "", rv, "")
	}
	defer w.Stop()
	started, events := time.Now(), 0
	for {
		select {
		case <-ctx.Done():
			return state{phase: watching}, nil
		case <-r.resync:
			r.doResync()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return r.watchClosed(rv, started, events)
			}
			events++
			if ev.Type == watch.Error {
				// An ERROR event carries a *metav1.Status, never a T.
				err := statusError(ev.Object)
				if r.opts.Served != nil && unknownKind(err) {
					// An object of a kind the client's scheme does not
					// know: as one of another type, below.
					return r.relist(relistWhy{CauseOtherKind, "a watch event is of a kind the scheme does not know"}),
						r.eventError(ev, "", fmt.Errorf("%w: %w", ErrUnexpectedObject, err))
				}
				return r.watchFailed(rv, err)
			}
			if err := r.wentBack(ev); err != nil {
				return r.relist(relistWhy{CauseWentBack, fmt.Sprintf("resourceVersion went back to %s", eventRV(ev))}), err
			}
			if notT := r.apply(ev); notT != nil {
				if r.opts.Served == nil {
					r.report(notT) // skipped; the watch goes on
					continue
				}
				// An object of another kind: its CRD may have been
				// deleted and created again holding it, the objects of
				// this one with it. Run asks Served (Serving.OtherKind);
				// if it says served (a stray object, or an answer from
				// before the change), a relist finds out.
				return r.relist(relistWhy{CauseOtherKind, fmt.Sprintf("a watch event brought %T, not the reflector's type", ev.Object)}), notT
			}
		}
	}
}

// openWatch opens the ListerWatcher's watch. A ListerWatcher that gives
// neither a watch nor an error is broken; that is an error here, never a
// panic on the nil watch later
// (TestAListerWatcherThatGivesNoWatchAndNoErrorIsAnErrorNotAPanic).
func (r *Reflector[T]) openWatch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.lw.Watch(ctx, opts)
	if err == nil && nilcheck.IsNil(w) {
		return nil, errNoWatch
	}
	return w, err
}

// errNoWatch is openWatch's error for a ListerWatcher that broke its
// contract.
var errNoWatch = errors.New("reflector: ListerWatcher.Watch returned neither a watch nor an error")

// watchOptions asks for the changes after rv, with bookmarks, and a
// randomised server-side timeout.
func (r *Reflector[T]) watchOptions(rv string) metav1.ListOptions {
	timeout := r.watchTimeoutSeconds()
	return metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout}
}

// watchTimeoutSeconds is uniform in [WatchTimeout, WatchTimeout*(1+jitter)].
func (r *Reflector[T]) watchTimeoutSeconds() int64 {
	d := float64(r.opts.WatchTimeout) * (1 + random.Fraction()*r.opts.WatchTimeoutJitter)
	return max(1, int64(time.Duration(d)/time.Second))
}

// watchClosed decides what follows a watch, opened at rv, whose stream
// closed.
func (r *Reflector[T]) watchClosed(rv string, started time.Time, events int) (state, error) {
	age := time.Since(started)
	if age < r.opts.ShortWatch && r.LastSyncResourceVersion() == rv {
		return state{phase: watching}, &Error{Op: KindWatch, Name: r.opts.Name, ResourceVersion: rv,
			Err: fmt.Errorf("%w (%d events in %v)", ErrShortWatch, events, age.Round(time.Millisecond))}
	}
	if r.trace != nil {
		r.emit(KindWatchEnd, "", r.LastSyncResourceVersion(), fmt.Sprintf("after %d events", events))
	}
	return state{phase: watching}, nil
}

// watchFailed decides what follows a WATCH the server answered with an
// error, as a response or as an ERROR event.
func (r *Reflector[T]) watchFailed(rv string, err error) (state, error) {
	failure := &Error{Op: KindWatch, Name: r.opts.Name, ResourceVersion: rv, Err: err}
	switch {
	case isExpired(err):
		return r.afterExpired(r.relist(relistWhy{CauseExpired, fmt.Sprintf("resourceVersion %s is too old (410 Gone)", rv)})), failure
	case isTooLarge(err):
		return r.relist(relistWhy{CauseTooLarge, fmt.Sprintf("resourceVersion %s is too large for the server", rv)}), failure
	}
	return state{phase: watching}, failure
}

// apply gives one ADDED, MODIFIED, DELETED or BOOKMARK event to the store
// and advances LastSyncResourceVersion to its resourceVersion; such an
// event is a watch that works (see afterExpired). A bad event is reported
// and skipped, and is not one; the watch goes on
// (TestABadEventSkippedIsNotAWatchThatWorkedAfterA410). An event whose object is of
// another type, a bookmark's included (the API server stamps one with the
// kind the resource holds now), is skipped too, but not reported: its
// error is returned, for the caller to decide (the resource may hold
// another kind now).
func (r *Reflector[T]) apply(ev watch.Event) (notT error) {
	if ev.Type == watch.Bookmark && r.opts.Served != nil && ofAnotherType[T](ev.Object) {
		return r.eventError(ev, "", fmt.Errorf("%w: a bookmark with %T", ErrUnexpectedObject, ev.Object))
	}
	if ev.Type == watch.Bookmark {
		m, err := bookmarkMeta(ev.Object)
		if err != nil {
			r.report(r.eventError(ev, "", fmt.Errorf("%w: a bookmark with %T: %v", ErrUnexpectedObject, ev.Object, err)))
			return
		}
		r.emit(KindBookmark, "", m.GetResourceVersion(), "")
		if err := r.store.Bookmark(m.GetResourceVersion()); err != nil {
			r.report(r.eventError(ev, m.GetResourceVersion(), fmt.Errorf("the store refused a bookmark: %w", err)))
		}
		r.setRV(m.GetResourceVersion())
		r.expired = false
		return
	}
	obj, ok := ev.Object.(T)
	if !ok || informer.IsNil(obj) {
		var want T
		err := r.eventError(ev, "", fmt.Errorf("%w: %s event with %T, want %T", ErrUnexpectedObject, ev.Type, ev.Object, want))
		if !ok && ev.Object != nil {
			return err
		}
		r.report(err)
		return nil
	}
	key, objRV := keyText(obj), obj.GetResourceVersion()
	var write func(T) error
	switch ev.Type {
	case watch.Added:
		write = r.store.Add
	case watch.Modified:
		write = r.store.Update
	case watch.Deleted:
		write = r.store.Delete
	default:
		r.report(r.eventError(ev, objRV, fmt.Errorf("%w: unknown event type %q", ErrUnexpectedObject, ev.Type)))
		return
	}
	// Traced before the store call, so a trace reads in the order of the
	// data flow: the event arrives, then the DeltaFIFO queues it.
	r.emit(KindWatchEvent, key, objRV, string(ev.Type))
	if err := write(obj); err != nil {
		// The store refused a valid event (say, an object without a name).
		// Retrying would not change its mind, so the watch moves on.
		r.report(r.eventError(ev, objRV, fmt.Errorf("the store refused %s %s: %w", ev.Type, key, err)))
	}
	r.setRV(objRV)
	r.expired = false
	return nil
}

// bookmarkMeta is the metadata of a bookmark's object, or an error if it
// has none: not an object, or a nil one (a typed nil too, whose methods
// would panic).
func bookmarkMeta(obj runtime.Object) (metav1.Object, error) {
	if nilcheck.IsNil(obj) {
		return nil, errors.New("no object")
	}
	return meta.Accessor(obj)
}

func (r *Reflector[T]) eventError(ev watch.Event, rv string, err error) *Error {
	return &Error{Op: KindWatchEvent, Name: r.opts.Name, ResourceVersion: rv, Err: err}
}

// keyText is obj's key for the trace, or its name if it has no valid key.
func keyText(obj informer.Object) string {
	if key, err := informer.KeyOf(obj); err == nil {
		return key.String()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// wentBack returns an error if ev carries a resourceVersion older than the
// one the store is in sync with, when both are integers (see
// ErrResourceVersionWentBack); nil otherwise.
func (r *Reflector[T]) wentBack(ev watch.Event) error {
	last, err := strconv.ParseUint(r.LastSyncResourceVersion(), 10, 64)
	if err != nil {
		return nil
	}
	got, err := strconv.ParseUint(eventRV(ev), 10, 64)
	if err != nil || got >= last {
		return nil
	}
	return &Error{Op: KindWatchEvent, Name: r.opts.Name, ResourceVersion: eventRV(ev),
		Err: fmt.Errorf("%w: %s event at %d after the store was in sync with %d", ErrResourceVersionWentBack, ev.Type, got, last)}
}

// eventRV is the resourceVersion an event carries, "" if it has none
// (including a nil or typed-nil object, which apply reports).
func eventRV(ev watch.Event) string {
	if ev.Object == nil {
		return ""
	}
	if v := reflect.ValueOf(ev.Object); v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	if m, err := meta.Accessor(ev.Object); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}
