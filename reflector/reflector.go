package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// Reflector keeps a Store converging to the API server's truth about one
// collection: it lists the collection, watches it from the list's
// resourceVersion, and lists again only when the server can no longer say
// what changed. It is client-go's Reflector (tools/cache/reflector.go)
// with the protocol written as a state machine; see the package doc.
//
// Create one with New; run it with Run.
type Reflector[T informer.Object] struct {
	lw    ListerWatcher[T]
	store Store[T]
	opts  Options[T] // with defaults applied; never changed after New
	trace informer.TraceHook

	// running is true while Run runs; a second concurrent Run is refused,
	// since two loops would write the same store out of order.
	running atomic.Bool
	// lastSyncRV is LastSyncResourceVersion. Only Run's goroutine writes
	// it; any goroutine may read it.
	lastSyncRV atomic.Pointer[string]

	// The fields below belong to Run's goroutine alone, so need no lock.

	backoff backoff
	// rewatch limits how often the watching phase opens a WATCH.
	rewatch *rate.Limiter
	// synced is true once a Replace succeeded: from then on the store
	// holds a whole list and may be resynced.
	synced bool
	// streamRefused is true once the server refused a streaming list; the
	// reflector uses LIST from then on, until Run returns.
	streamRefused bool
	// streamsEnded counts the streaming lists of this Run that ended
	// before their end bookmark since the last that reached it; at
	// Tuning.StreamEndedLimit streaming is refused.
	streamsEnded int
	// expired is true when the latest relist of this Run was for a 410
	// and no watch has delivered an event since (a bad one, skipped, is
	// none). See afterExpired.
	expired bool
	// expiredContinues counts the continue tokens that expired since the
	// last successful list of this Run; at Tuning.ExpiredContinueLimit the
	// next list is unpaged.
	expiredContinues int
	// resync receives a tick ResyncPeriod after the previous resync was
	// handled (see armResync); nil when resync is off. resyncTimer is the
	// pending tick's timer.
	resync      chan struct{}
	resyncTimer informer.Timer
}

// New returns a Reflector for opts; see Options for the defaults. It
// fails if opts.ListerWatcher or opts.Store is nil.
func New[T informer.Object](opts Options[T]) (*Reflector[T], error) {
	if opts.ListerWatcher == nil {
		return nil, errors.New("reflector.New: Options.ListerWatcher is nil")
	}
	if opts.Store == nil {
		return nil, errors.New("reflector.New: Options.Store is nil")
	}
	opts = opts.withDefaults()
	return &Reflector[T]{
		lw:      opts.ListerWatcher,
		store:   opts.Store,
		opts:    opts,
		trace:   opts.Trace,
		backoff: newBackoff(opts),
		rewatch: newRewatchLimiter(opts),
	}, nil
}

// newRewatchLimiter is the token bucket of Tuning.RewatchQPS and
// RewatchBurst.
func newRewatchLimiter[T informer.Object](o Options[T]) *rate.Limiter {
	if o.RewatchQPS < 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(rate.Limit(o.RewatchQPS), o.RewatchBurst)
}

// Name identifies the reflector in its errors and logs: Options.Name, or
// by default what its ListerWatcher lists, such as "configmaps in
// namespace shop, labels app=web".
func (r *Reflector[T]) Name() string { return r.opts.Name }

// LastSyncResourceVersion is the resourceVersion the reflector has handed
// to the store: the latest list's, then each event's and bookmark's as the
// watch delivers them. It is where the next watch starts. A store that
// queues (a DeltaFIFO) may not have applied it yet: ask the store how far
// it is (the informer's LastSyncResourceVersion does). It is "" until the
// first list is in. Safe to call from any goroutine.
func (r *Reflector[T]) LastSyncResourceVersion() string {
	if p := r.lastSyncRV.Load(); p != nil {
		return *p
	}
	return ""
}

// phase is what the reflector does next. The protocol, phase by phase:
//
//	start ──▶ listing or streaming ──Replace(list, rv)──▶ watching ◀──┐
//	               ▲                                       │   │      │
//	               │ 410 Gone or "too large": relist at    │   └──────┘
//	               │ resourceVersion "", never the old one │   ended: watch again
//	               └───────────────────────────────────────┘   from the last rv
//
// A streaming list that the server refuses becomes a listing. A failure
// delays the next phase by the backoff; only a first 410 does not (see
// afterExpired).
type phase int

const (
	// listing: LIST the collection page by page at state.listRV, then hand
	// the whole list to the store's Replace. Next: watching, from the
	// list's resourceVersion.
	listing phase = iota
	// streaming: open one WATCH with sendInitialEvents=true, gather its
	// ADDED events until the bookmark that marks the end of the initial
	// events, then Replace. Next: watching, on that same watch.
	streaming
	// watching: open a WATCH from LastSyncResourceVersion (or keep the one
	// a streaming list left open) and give each event to the store. Next:
	// watching again when it ends; a relist after 410 Gone.
	watching
)

// state is where the protocol is: the phase and what it needs.
type state struct {
	phase phase
	// listRV is the resourceVersion a listing asks for: "" (consistent)
	// or "0" (any).
	listRV string
	// unpaged asks a listing for the whole collection in one response.
	unpaged bool
	// why is the reason for a relist, traced when it starts; zero for the
	// first list.
	why relistWhy
	// open is a watch handed from streaming to watching; nil otherwise.
	open watch.Interface
	// now skips the backoff before this state although the step that chose
	// it failed. Only afterExpired sets it.
	now bool
}

// Run lists and watches until ctx ends, then returns nil, having stopped
// every watch it opened and left no goroutine behind. Failures do not end
// it: each is reported through Options.OnError and retried after the
// backoff; a resource the server stops serving is waited for instead (see
// Options.Served). It returns an error only if the reflector is already
// running.
func (r *Reflector[T]) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return fmt.Errorf("reflector %s: Run is already running", r.opts.Name)
	}
	defer r.running.Store(false)
	// A refusal of streaming lasts for the rest of one Run: a Run after
	// it streams again. Its first list is a new list: the expiries of the
	// previous Run's last list neither delay nor unpage it
	// (TestARunAgainStartsItsListWithNoExpiryOfThePreviousRun).
	r.streamRefused, r.streamsEnded = false, 0
	r.expired, r.expiredContinues = false, 0
	if r.opts.ResyncPeriod > 0 {
		r.resync = make(chan struct{}, 1)
		r.armResync()
		defer func() { r.resyncTimer.Stop() }()
	}

	s := r.firstList()
	for ctx.Err() == nil {
		next, err := r.step(ctx, s)
		if err != nil && ctx.Err() == nil {
			if again, gone := r.untilServedAgain(ctx, err); gone {
				s = again
				continue
			}
			r.report(err)
			if !next.now {
				r.pause(ctx, r.backoff.next(time.Now(), retryAfter(err)))
			}
		}
		s = next
	}
	if s.open != nil {
		s.open.Stop()
	}
	return nil
}

// step takes one step of the protocol: it runs s's phase to its end and
// returns the next state, and the error that ended the phase, if any.
func (r *Reflector[T]) step(ctx context.Context, s state) (state, error) {
	switch s.phase {
	case listing:
		return r.list(ctx, s)
	case streaming:
		return r.stream(ctx, s)
	default:
		return r.watch(ctx, s)
	}
}

// firstList is the state Run starts in.
func (r *Reflector[T]) firstList() state {
	if r.opts.StreamingList {
		return state{phase: streaming}
	}
	if r.opts.InitialList == ListAny {
		return state{phase: listing, listRV: "0"}
	}
	return state{phase: listing, listRV: ""}
}

// relist is the state after the server said the reflector's
// resourceVersion is unusable: a consistent list (resourceVersion ""),
// which gives a resourceVersion the server can watch from. Listing at the
// old one again could loop forever (kubernetes#133810).
func (r *Reflector[T]) relist(why relistWhy) state {
	if r.opts.StreamingList && !r.streamRefused {
		return state{phase: streaming, why: why}
	}
	return state{phase: listing, listRV: "", why: why}
}

// afterExpired is the state after a 410 Gone: a relist, at once the
// first time. The server answered, so it is up; history moved on while the
// reflector was away, and waiting would only delay recovery. But if the
// previous relist of this Run was for a 410 too and no watch has
// delivered an event since (see apply: a bad one, skipped, is none), the
// relist waits for the backoff: a server that answers 410 to
// every watch cannot make the reflector list in a loop.
func (r *Reflector[T]) afterExpired(s state) state {
	s.now = !r.expired
	r.expired = true
	return s
}

// setRV records that the store is in sync with rv. An object or bookmark
// without a resourceVersion does not move it.
func (r *Reflector[T]) setRV(rv string) {
	old := r.LastSyncResourceVersion()
	if rv == "" || rv == old {
		return
	}
	r.lastSyncRV.Store(&rv)
	if r.trace != nil {
		r.emit(KindResourceVersion, "", rv, "from "+quoteEmpty(old))
	}
}

// report hands a failure to the trace and to Options.OnError.
func (r *Reflector[T]) report(err error) {
	if r.trace != nil {
		r.emit(KindError, "", "", err.Error())
	}
	r.opts.OnError(err)
}

func quoteEmpty(rv string) string {
	if rv == "" {
		return `""`
	}
	return rv
}
