package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A resource can stop being served while a reflector mirrors it: its CRD
// is deleted, its APIService removed, or its version is no longer served.
// Every LIST and WATCH then fails with 404 Not Found. Retrying at the
// backoff's cap forever, as client-go does (kubernetes#79610), costs the
// server a request and the log a line per retry, for nothing.
//
// A 404 alone does not prove the resource is gone: a proxy in between or
// a server still starting can answer one. So the reflector asks
// Options.Served, which asks the server's discovery, and only a "no" from
// there stops it:
//
//	LIST/WATCH ──404──▶ Served? ──yes──▶ report the 404, retry after the backoff
//	                       │
//	                       no
//	                       ▼
//	report ErrNotServed once; empty the store (deletes, final state unknown)
//	                       │
//	                       ▼
//	wait the backoff ──▶ Served? ──no──┐   (discovery only: no LIST, no WATCH)
//	       ▲                           │
//	       └───────────────────────────┘
//	                       │ yes
//	                       ▼
//	relist from scratch (cause served-again)

// untilServedAgain runs after a step failed with err. It reports whether
// the resource has stopped being served; if it has, it returns only once
// it is served again (with the relist to make) or ctx ended (with the
// zero state, which Run does not use).
func (r *Reflector[T]) untilServedAgain(ctx context.Context, err error) (state, bool) {
	if r.opts.Served == nil || !apierrors.IsNotFound(err) {
		return state{}, false
	}
	if served, askErr := r.opts.Served(ctx); served || askErr != nil {
		return state{}, false // a 404 from something else, or discovery cannot tell: retry as usual
	}
	r.notServed(err)
	for {
		r.pause(ctx, r.backoff.next(time.Now(), 0))
		if ctx.Err() != nil {
			return state{}, true
		}
		if served, askErr := r.opts.Served(ctx); served && askErr == nil {
			r.emit(KindServedAgain, "", "", "discovery lists the resource again")
			return r.relist(relistWhy{CauseServedAgain, "the resource is served again: list it from scratch"}), true
		}
	}
}

// notServed reports that the resource is gone, once, and empties the
// store: what it held was deleted with the resource (the API server
// deletes every object of a CRD before the CRD itself), and whatever
// deletes the watch did not deliver, emptying the store now does.
func (r *Reflector[T]) notServed(cause error) {
	op := KindList
	var failed *Error
	if errors.As(cause, &failed) {
		op, cause = failed.Op, failed.Err
	}
	r.emit(KindNotServed, "", r.LastSyncResourceVersion(), "discovery no longer lists the resource")
	r.report(&Error{Op: op, Name: r.opts.Name, Err: fmt.Errorf("%w (discovery no longer lists it; waiting until it does): %w", ErrNotServed, cause)})
	r.empty()
}

// empty deletes everything the store holds. Once a list has finished,
// that is a Replace with no objects. Before, a plain Store holds nothing
// (it gets a list whole), but a PartStore may hold the parts of a list
// cut short: its Empty deletes them and, not being a list, leaves it
// unsynced, so the sync wait still reports the resource as not served.
func (r *Reflector[T]) empty() {
	if !r.synced {
		parts, ok := r.store.(PartStore[T])
		if !ok {
			return
		}
		if err := parts.Empty(); err != nil {
			r.report(&Error{Op: KindReplace, Name: r.opts.Name, Err: err})
		}
		return
	}
	if err := r.store.Replace(nil, r.LastSyncResourceVersion()); err != nil {
		r.report(&Error{Op: KindReplace, Name: r.opts.Name, Err: err})
		return
	}
	r.emit(KindReplace, "", r.LastSyncResourceVersion(), objects(0))
}
