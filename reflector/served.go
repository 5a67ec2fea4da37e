package reflector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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
// there stops it. Discovery also tells the two ways of "no" apart, and
// they leave the store differently. "Gone", the one that deletes, is
// believed only when discovery says it twice, BackoffInitial apart
// (servedNow):
//
//	LIST/WATCH ──404──▶ Served? ──yes──▶ report the 404, retry after the backoff
//	(or objects of another kind)
//	                       │
//	        ┌──────────────┴─────────────────┐
//	 in no version, twice: gone        in other versions only: moved
//	 report ErrNotServed; empty        report *VersionNotServedError; keep
//	 the store (deletes, final         the store as it is (the objects
//	 state unknown)                    are not known deleted: no deletes)
//	        └──────────────┬─────────────────┘
//	                       ▼
//	wait the backoff ──▶ Served? ──no──┐   (discovery only: no LIST, no WATCH;
//	       ▲                           │    a new answer, gone ↔ moved, is
//	       └───────────────────────────┘    reported and acted on as above)
//	                       │ yes
//	                       ▼
//	relist from scratch (cause served-again)

// Serving is discovery's answer to Options.Served: is the resource the
// reflector reads served, in its version or in another?
type Serving struct {
	// Served is true when discovery lists the resource in the version
	// the reflector reads.
	Served bool
	// Version is the version the reflector reads, for the report
	// ("v1beta1"). Optional.
	Version string
	// Elsewhere, when Served is false, are the other versions of the
	// resource's group in which discovery lists the resource, preferred
	// first. Empty: the resource is served in no version, so it is gone,
	// and its objects with it. Not empty: only this version went (a CRD
	// moved to a new one), which deletes no object; discovery cannot tell
	// what else happened while the watch was down.
	Elsewhere []string
	// ClusterScoped, when Served is false and Elsewhere empty, says why
	// a resource discovery lists is not served: it is cluster-scoped, and
	// the reflector reads one namespace. A CRD's scope changes only by
	// deleting the CRD, its objects with it, and creating it again, so
	// the namespace's objects are gone as if the resource were.
	ClusterScoped bool
	// OtherKind, when Served is false and Elsewhere empty, says why a
	// resource discovery lists is not served: it holds this kind, not
	// the reflector's. A CRD's kind changes only by deleting the CRD,
	// its objects with it, and creating it again under the same plural;
	// the reflector's LISTs then fail to decode, never with a 404.
	OtherKind string
}

// untilServedAgain runs after a step failed with err: a 404, or a list
// or watch event of objects that are not T's (ErrUnexpectedObject: the
// resource may hold another kind now, see Serving.OtherKind; not an
// ownFault, which says nothing of what it holds). It reports
// whether the resource has stopped being served; if it has, it returns
// only once it is served again (with the relist to make) or ctx ended
// (with the zero state, which Run does not use).
func (r *Reflector[T]) untilServedAgain(ctx context.Context, err error) (state, bool) {
	if r.opts.Served == nil || isOwnFault(err) || !apierrors.IsNotFound(err) && !errors.Is(err, ErrUnexpectedObject) {
		return state{}, false
	}
	answer, askErr := r.servedNow(ctx)
	if answer.Served || askErr != nil {
		return state{}, false // a 404 from something else, or discovery cannot tell: retry as usual
	}
	r.notServed(err, answer)
	for {
		r.pause(ctx, r.backoff.next(time.Now(), 0))
		if ctx.Err() != nil {
			return state{}, true
		}
		now, askErr := r.servedNow(ctx)
		switch {
		case askErr != nil: // discovery cannot tell: ask again after the backoff
		case now.Served:
			r.emit(KindServedAgain, "", "", "discovery lists the resource again")
			return r.relist(relistWhy{CauseServedAgain, "the resource is served again: list it from scratch"}), true
		case !slices.Equal(now.Elsewhere, answer.Elsewhere):
			// Gone ↔ moved, or moved elsewhere: say so, and act on it.
			// Gone ↔ cluster-scoped is no news: nothing of the namespace
			// exists either way, and the store is empty already.
			answer = now
			r.notServed(err, answer)
		}
	}
}

// servedNow asks Options.Served whether the resource is served. "Gone"
// is the one answer that deletes (notServed empties the store), and
// discovery answers it from several requests: a CRD that moves between
// them, v1 to v2 and back, can look gone for one check while its objects
// live on. So a "gone" is asked again after BackoffInitial, and believed
// only if discovery says it again; the second answer is the one returned,
// whatever it is. An error, ctx's included, is "cannot tell". The wait is
// the first backoff's, and the backoff does not grow for it: a resource
// that is really gone is found so no more than BackoffInitial later. The
// second look's context says it is one (SecondLook), so that Served
// answers it from requests made after the first look, not from the
// answers behind it, which would only repeat them.
func (r *Reflector[T]) servedNow(ctx context.Context) (Serving, error) {
	answer, err := r.opts.Served(ctx)
	if err != nil || answer.Served || len(answer.Elsewhere) > 0 {
		return answer, err
	}
	r.pause(ctx, r.backoff.initial)
	if err := ctx.Err(); err != nil {
		return Serving{}, err
	}
	return r.opts.Served(WithSecondLook(ctx))
}

// secondLookKey marks the context of Served's second look at a "gone".
type secondLookKey struct{}

// WithSecondLook returns ctx marked as that of a second look (see
// SecondLook): the reflector calls Options.Served with it; a test of a
// Served function uses it to ask as the reflector does.
func WithSecondLook(ctx context.Context) context.Context {
	return context.WithValue(ctx, secondLookKey{}, true)
}

// SecondLook reports whether ctx is that of an Options.Served call that
// looks again at a "gone" the previous call answered. Such a call must
// be answered from discovery requests made after the previous call; a
// cache the previous one used would only repeat its answer, and "gone"
// empties the store.
func SecondLook(ctx context.Context) bool {
	second, _ := ctx.Value(secondLookKey{}).(bool)
	return second
}

// notServed reports, once per answer, that the resource is not served in
// the reflector's version, and acts on why:
//
//   - In no version, the resource is gone: what the store held was
//     deleted with it (the API server deletes every object of a CRD
//     before the CRD itself), and whatever deletes the watch did not
//     deliver, emptying the store now does. So too when discovery lists
//     it cluster-scoped and the reflector reads one namespace: the CRD
//     was created again with another scope, after its objects were
//     deleted.
//   - In other versions, the version moved, which deletes nothing: the
//     store keeps the objects as they were, so that no consumer reads a
//     deletion that did not happen. They are no longer watched, so what
//     changed or was deleted since the watch ended is not in the store
//     (a CRD deleted and created again in another version, while the
//     watch was down, cannot be told apart by discovery); the report
//     names the versions served, where whoever runs the reflector can
//     follow them.
func (r *Reflector[T]) notServed(cause error, answer Serving) {
	op := KindList
	var failed *Error
	if errors.As(cause, &failed) {
		op, cause = failed.Op, failed.Err
	}
	if len(answer.Elsewhere) > 0 {
		if r.trace != nil {
			r.emit(KindVersionNotServed, "", r.LastSyncResourceVersion(), fmt.Sprintf(
				"discovery lists the resource in %s, not in %s: the store keeps its objects", strings.Join(answer.Elsewhere, ", "), quoteEmpty(answer.Version)))
		}
		r.report(&Error{Op: op, Name: r.opts.Name, Err: &VersionNotServedError{Version: answer.Version, Served: answer.Elsewhere, Err: cause}})
		return
	}
	said, why := "discovery no longer lists the resource", "discovery no longer lists it; waiting until it does"
	switch {
	case answer.OtherKind != "":
		said = fmt.Sprintf("discovery lists the resource holding kind %s, not the reflector's: its CRD was created again", answer.OtherKind)
		why = fmt.Sprintf("discovery lists it holding kind %s; waiting until it holds the reflector's", answer.OtherKind)
	case answer.ClusterScoped:
		said = "discovery lists the resource cluster-scoped, and the reflector reads one namespace"
		why = "discovery lists it cluster-scoped, not in a namespace; waiting until it is namespaced"
	}
	r.emit(KindNotServed, "", r.LastSyncResourceVersion(), said)
	r.report(&Error{Op: op, Name: r.opts.Name, Err: fmt.Errorf("%w (%s): %w", ErrNotServed, why, cause)})
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
	r.emit(KindReplace, "", r.LastSyncResourceVersion(), "0 objects")
}
