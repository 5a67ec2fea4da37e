package reflector

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// list runs the listing phase: LIST the collection page by page, and
// hand the list to the store.
//
// Pages: each page's continue token asks for the next page of the same
// state, so the pages add up to one consistent list, at the resourceVersion
// the last page reports. The first page carries the resourceVersion
// choice; later pages carry only the token (the server refuses both).
//
// The store: a PartStore gets the list as it arrives, every page (and,
// from a PartLister, every part of a page) handed over at once, so the
// whole list never sits in memory beside the cache it replaces; only
// FinishReplace, once the last page is in, lets the store tombstone what
// the list lacked. Any other Store gets one Replace once every page is
// in. Either way a list that fails half-way deletes nothing, and the
// list starts over. If the server forgot the pages' state before the last
// page (the continue token expired) Tuning.ExpiredContinueLimit times, or
// answered a page with a continue token the list had sent already, the
// list starts over unpaged: one response, however large, rather than a
// list that never ends.
func (r *Reflector[T]) list(ctx context.Context, s state) (state, error) {
	r.emitRelist(s.why)
	limit := r.opts.PageSize
	if s.unpaged {
		limit = 0
	}
	refused := func(rv string, err error) (state, error) {
		return state{phase: listing, listRV: s.listRV, unpaged: s.unpaged, why: relistWhy{CauseStoreRefused, "the store refused the last list"}},
			&Error{Op: KindReplace, Name: r.opts.Name, ResourceVersion: rv, Err: err}
	}
	into := r.newListSink(ctx)
	if err := into.begin(); err != nil {
		return refused(s.listRV, err)
	}
	opts := metav1.ListOptions{ResourceVersion: s.listRV, Limit: limit}
	var rv string
	sent := map[string]bool{} // the continue tokens this list has sent
	for page := 1; ; page++ {
		n, meta, answered, err := r.listPage(ctx, opts, into)
		if into.err != nil {
			return refused(meta.ResourceVersion, into.err)
		}
		if err != nil {
			return r.listFailed(s, opts, err)
		}
		if r.trace != nil {
			r.emit(KindList, "", meta.ResourceVersion, pageDetail(page, n, answered, meta.Continue != "", s.listRV, opts.Limit))
		}
		if meta.Continue == "" {
			rv = meta.ResourceVersion
			break
		}
		if sent[meta.Continue] {
			// A server (or a proxy) whose tokens come round again, the
			// one just sent or an earlier one, would have the pages
			// come round for ever: list the whole collection in one
			// response instead, after the backoff
			// (TestAContinueTokenAnsweredWithItselfEndsThePagingAndListsUnpaged,
			// TestAContinueTokenThatComesRoundAgainEndsThePagingAndListsUnpaged).
			return state{phase: listing, unpaged: true, why: relistWhy{CauseFailed, "a continue token came round again: list the whole collection in one response"}},
				&Error{Op: KindList, Name: r.opts.Name, ResourceVersion: s.listRV,
					Err: fmt.Errorf("the server answered page %d with a continue token this list had sent already: the list would never end", page)}
		}
		sent[meta.Continue] = true
		opts = metav1.ListOptions{Continue: meta.Continue, Limit: limit}
	}
	if rv == "" {
		return state{phase: listing, listRV: s.listRV, unpaged: s.unpaged, why: relistWhy{CauseNoRV, "the last list had no resourceVersion"}},
			&Error{Op: KindList, Name: r.opts.Name, ResourceVersion: s.listRV, Err: ErrNoResourceVersion}
	}
	if err := into.finish(rv); err != nil {
		return refused(rv, err)
	}
	if r.trace != nil {
		r.emit(KindReplace, "", rv, objects(into.listed))
	}
	r.synced = true
	r.expiredContinues = 0
	r.setRV(rv)
	return state{phase: watching}, nil
}

// listPage LISTs one page into sink, in parts if the ListerWatcher can
// read in parts, and says how many objects the page held and, if the
// ListerWatcher noted it (noteAnswered), the encoding it came in.
func (r *Reflector[T]) listPage(ctx context.Context, opts metav1.ListOptions, into *listSink[T]) (int, metav1.ListMeta, string, error) {
	before := into.listed
	into.hold.newRequest()
	answered := new(string)
	ctx = context.WithValue(ctx, answeredKey{}, answered)
	if pl, ok := r.lw.(PartLister[T]); ok {
		meta, err := pl.ListInParts(ctx, opts, into.part)
		return into.listed - before, meta, *answered, err
	}
	items, meta, err := r.lw.List(ctx, opts)
	if err != nil {
		return 0, meta, *answered, err
	}
	return len(items), meta, *answered, into.part(items)
}

// answeredKey is the context key under which listPage passes a LIST the
// string that noteAnswered fills in.
type answeredKey struct{}

// noteAnswered records, for the LIST whose context ctx is, the encoding
// its answer came in ("CBOR", "JSON", "protobuf"), for its KindList trace
// event. A RESTListerWatcher calls it once it has told the answer's
// encoding by its first bytes; outside a reflector's LIST it does nothing.
func noteAnswered(ctx context.Context, encoding string) {
	if answered, ok := ctx.Value(answeredKey{}).(*string); ok {
		*answered = encoding
	}
}

// listFailed decides what follows a failed LIST request:
//
//   - 410 on a continue token: the list's state has been compacted away
//     since the first page; start over with a fresh consistent list, at
//     once (see afterExpired), unpaged once this has happened
//     Tuning.ExpiredContinueLimit times.
//   - 410 or "too large" on the resourceVersion asked for: it is unusable
//     here; a consistent list needs none.
//   - anything else (403, 404, 429, 500, a network error, a bad
//     response): the same list again, after the backoff.
func (r *Reflector[T]) listFailed(s state, opts metav1.ListOptions, err error) (state, error) {
	failure := &Error{Op: KindList, Name: r.opts.Name, ResourceVersion: opts.ResourceVersion, Err: err}
	switch {
	case opts.Continue != "" && isExpired(err):
		r.expiredContinues++
		next := state{phase: listing, listRV: "", why: relistWhy{CauseExpired, "the continue token expired (410 Gone): start the list over"}}
		if r.expiredContinues >= r.opts.ExpiredContinueLimit {
			next.unpaged = true
			next.why.text = fmt.Sprintf("%d continue tokens expired (410 Gone): list the whole collection in one response", r.expiredContinues)
		}
		return r.afterExpired(next), failure
	case isExpired(err):
		return state{phase: listing, listRV: "", why: relistWhy{CauseExpired, fmt.Sprintf("resourceVersion %q is too old (410 Gone)", opts.ResourceVersion)}}, failure
	case isTooLarge(err):
		return state{phase: listing, listRV: "", why: relistWhy{CauseTooLarge, fmt.Sprintf("resourceVersion %q is too large for the server", opts.ResourceVersion)}}, failure
	}
	return state{phase: listing, listRV: s.listRV, unpaged: s.unpaged, why: relistWhy{CauseFailed, "retry after a failed list"}}, failure
}

// pageDetail describes one page for the trace:
// `page 1: 500 objects, more follow (asked resourceVersion="", limit=500)`,
// with the encoding it came in when known:
// `page 1: 500 objects in CBOR, ...`.
func pageDetail(page, n int, encoding string, more bool, askedRV string, limit int64) string {
	d := fmt.Sprintf("page %d: %s", page, objects(n))
	if encoding != "" {
		d += " in " + encoding
	}
	if more {
		d += ", more follow"
	}
	if page == 1 {
		d += fmt.Sprintf(" (asked resourceVersion=%q, limit=%d)", askedRV, limit)
	}
	return d
}
