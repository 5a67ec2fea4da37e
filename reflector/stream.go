package reflector

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// stream runs the streaming phase: the initial list over one WATCH.
//
// The server sends the current state as ADDED events, then a BOOKMARK
// annotated "k8s.io/initial-events-end: true" whose resourceVersion is the
// state just sent. The events are a list, not creations: a PartStore gets
// them in parts as they arrive and FinishReplace at the bookmark, any
// other Store gets them gathered, in one Replace (see streamSink). The
// same watch then goes on as the watching phase. The server never builds
// one large list response, which is the point (KEP-3157).
//
// What follows a failure:
//
//   - the server refuses the request with a 4xx other than 429 and 410
//     (no WatchList feature, an old server rejecting the parameters): fall
//     back to LIST for the rest of Run, at once.
//   - the stream ends before the end bookmark: a cut connection, so stream
//     again after the backoff; but the Tuning.StreamEndedLimit-th such end
//     since a stream last reached its bookmark is a server that ignores
//     the parameters: fall back to LIST.
//   - anything else (an ERROR event, 429, 410, 5xx, a network error): stream
//     again after the backoff.
func (r *Reflector[T]) stream(ctx context.Context, s state) (state, error) {
	r.emitRelist(s.why)
	timeout := r.watchTimeoutSeconds()
	send := true
	w, err := r.openWatch(ctx, metav1.ListOptions{
		SendInitialEvents:    &send,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		ResourceVersion:      "", // the newest state: a consistent read
		AllowWatchBookmarks:  true,
		TimeoutSeconds:       &timeout,
	})
	if err != nil {
		if refused(err) {
			return r.fallBack(err.Error()), nil
		}
		return state{phase: streaming, why: relistWhy{CauseFailed, "retry the streaming list"}}, &Error{Op: KindWatch, Name: r.opts.Name, Err: err}
	}
	r.emit(KindWatch, "", "", "streaming list")

	initial, err := r.newStreamSink()
	if err != nil {
		w.Stop()
		return state{phase: streaming, why: relistWhy{CauseStoreRefused, "the store refused the last list"}},
			&Error{Op: KindReplace, Name: r.opts.Name, Err: err}
	}
	for {
		select {
		case <-ctx.Done():
			w.Stop()
			return s, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				w.Stop()
				failure := &Error{Op: KindWatch, Name: r.opts.Name, Err: ErrStreamEnded}
				if r.streamsEnded++; r.streamsEnded >= r.opts.StreamEndedLimit {
					return r.fallBack(fmt.Sprintf("%d streaming lists ended early: %v", r.streamsEnded, ErrStreamEnded)), failure
				}
				return state{phase: streaming, why: relistWhy{CauseFailed, "the streaming list was cut: stream again"}}, failure
			}
			switch ev.Type {
			case watch.Error:
				w.Stop()
				err, why := statusError(ev.Object), relistWhy{CauseFailed, "retry the streaming list"}
				if r.opts.Served != nil && unknownKind(err) { // as an object of another type, below
					err, why = fmt.Errorf("%w: %w", ErrUnexpectedObject, err), relistWhy{CauseOtherKind, "an initial event is of a kind the scheme does not know"}
				}
				return state{phase: streaming, why: why}, &Error{Op: KindWatch, Name: r.opts.Name, Err: err}
			case watch.Bookmark:
				if r.opts.Served != nil && ofAnotherType[T](ev.Object) {
					// The API server stamps a bookmark with the kind the
					// resource holds now: of another type, it may hold
					// another kind, with none of its objects yet
					// (TestAStreamedEndBookmarkOfAnotherTypeAsksServed).
					w.Stop()
					return state{phase: streaming, why: relistWhy{CauseOtherKind, "a bookmark is of another type"}},
						r.eventError(ev, "", fmt.Errorf("%w: a bookmark with %T", ErrUnexpectedObject, ev.Object))
				}
				rv, end := r.initialEventsEnd(ev)
				if !end {
					continue // a progress bookmark: nothing to keep until the list is whole
				}
				if rv == "" {
					// As a LIST without one: no watch could start from it
					// (TestAStreamedListWithoutAResourceVersionIsRefusedAsAListIs).
					w.Stop()
					return state{phase: streaming, why: relistWhy{CauseNoRV, "the streamed list had no resourceVersion"}},
						&Error{Op: KindWatch, Name: r.opts.Name, Err: ErrNoResourceVersion}
				}
				n, err := initial.finish(rv)
				if err != nil {
					w.Stop()
					return state{phase: streaming, why: relistWhy{CauseStoreRefused, "the store refused the last list"}},
						&Error{Op: KindReplace, Name: r.opts.Name, ResourceVersion: rv, Err: err}
				}
				if r.trace != nil {
					r.emit(KindReplace, "", rv, objects(n))
				}
				r.synced = true
				r.streamsEnded = 0
				r.setRV(rv)
				return state{phase: watching, open: w}, nil
			default:
				bad, refused := initial.add(ev)
				switch {
				case errors.Is(bad, errDeletedAmongInitialEvents):
					// Not the protocol, and a deletion cannot be taken
					// back from parts handed over: list instead.
					w.Stop()
					return r.fallBack(bad.Error()), &Error{Op: KindWatch, Name: r.opts.Name, Err: bad}
				case bad != nil && r.opts.Served != nil && ofAnotherType[T](ev.Object):
					// An object of another type: the resource may hold
					// another kind now. Run asks Served, as for a LIST
					// of them; the stream is listed again after that.
					w.Stop()
					return state{phase: streaming, why: relistWhy{CauseOtherKind, "an initial event brought an object of another type"}},
						r.eventError(ev, "", bad)
				case bad != nil:
					r.report(r.eventError(ev, "", bad))
				case refused != nil:
					w.Stop()
					return state{phase: streaming, why: relistWhy{CauseStoreRefused, "the store refused the last list"}},
						&Error{Op: KindReplace, Name: r.opts.Name, Err: refused}
				}
			}
		}
	}
}

// ofAnotherType reports whether obj is an object, but not a T: not nil,
// and not a T with a fault of its own (no name, say), which is skipped
// (TestAStreamedListWithOneNamelessObjectStillSyncsWithServed).
func ofAnotherType[T any](obj runtime.Object) bool {
	_, isT := obj.(T)
	return obj != nil && !isT
}

// fallBack is the state after the server refused streaming: LIST, as
// consistent as the stream would have been.
func (r *Reflector[T]) fallBack(answer string) state {
	r.streamRefused = true
	r.emit(KindFallback, "", "", answer)
	return state{phase: listing, listRV: "", why: relistWhy{CauseFailed, "the streaming list failed: list instead"}}
}

// refused reports a server's 4xx answer to a streaming list request,
// other than "too many requests" (429) and "too old" (410), which are
// worth retrying.
func refused(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != http.StatusTooManyRequests && !isExpired(err)
}

// initialEventsEnd reports whether a bookmark ends the initial events, and
// its resourceVersion.
func (r *Reflector[T]) initialEventsEnd(ev watch.Event) (rv string, end bool) {
	m, err := bookmarkMeta(ev.Object)
	if err != nil {
		r.report(r.eventError(ev, "", fmt.Errorf("%w: a bookmark with %T: %v", ErrUnexpectedObject, ev.Object, err)))
		return "", false
	}
	end = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	if end {
		r.emit(KindBookmark, "", m.GetResourceVersion(), "initial events end")
	}
	return m.GetResourceVersion(), end
}
