package reflector

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/listwatch/informer"
)

// InitialList chooses what the first LIST asks the server for.
type InitialList int

const (
	// ListConsistent asks for resourceVersion "": a consistent read, as new
	// as the server's storage, answered in pages of Options.PageSize.
	// Servers since 1.31 serve it from their watch cache once the cache has
	// caught up with etcd, so it costs etcd little. The default.
	ListConsistent InitialList = iota
	// ListAny asks for resourceVersion "0": whatever state the server has at
	// hand, from its watch cache. It is the cheapest read, but may be older
	// than what another client already saw, and the watch cache ignores
	// limit, so the whole collection comes in one response however large.
	// client-go's reflector does this by default.
	ListAny
)

// Options configure a Reflector. ListerWatcher and Store are required;
// every other field has the default its comment gives, used when the field
// is left zero.
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

	// PageSize is the limit of each LIST page. A negative value asks for
	// everything in one response. Default: 500.
	PageSize int64
	// ExpiredContinueLimit is how many times one list may lose its
	// continue token (410 Gone between two pages: the server compacted the
	// state the pages show) before the reflector stops paging and asks for
	// the whole collection in one consistent LIST. Paging again could lose
	// every time: a collection that takes longer to page through than the
	// server keeps its history would never sync. Default: 1, as client-go's
	// pager falls back at the first expiry.
	ExpiredContinueLimit int
	// InitialList chooses the resourceVersion of the first LIST. Relists
	// (after 410 Gone) are always consistent. Default: ListConsistent.
	InitialList InitialList
	// StreamingList fetches the initial list (and every relist) over one
	// WATCH with sendInitialEvents=true instead of LIST pages, so the server
	// never builds a large list response. When the server refuses it, the
	// reflector falls back to LIST for the rest of Run. Default: off
	// (client-go turns it on by default since v0.35).
	StreamingList bool
	// StreamEndedLimit is how many streaming lists in a row may end before
	// their end bookmark before the reflector lists instead for the rest
	// of Run. One such end is usually a cut connection, and streams again;
	// the same end again and again is a server that ignores
	// sendInitialEvents. A refusal (a 4xx answer) falls back at once.
	// Default: 3.
	StreamEndedLimit int

	// WatchTimeout is the shortest server-side timeout a WATCH asks for
	// (timeoutSeconds); the server then ends the watch and the reflector
	// opens the next one, from where it was. Default: 5m.
	WatchTimeout time.Duration
	// WatchTimeoutJitter randomises each watch's timeout, uniformly in
	// [WatchTimeout, WatchTimeout*(1+WatchTimeoutJitter)], so that many
	// clients started together do not all re-watch together. Negative: no
	// jitter. Default: 1.0 (client-go's 5 to 10 minutes).
	WatchTimeoutJitter float64
	// ShortWatch is the age below which a watch that ends without moving
	// the resourceVersion forward counts as a failure (ErrShortWatch) and
	// is retried only after the backoff, so a server that closes every
	// watch at once cannot make the reflector spin. A short watch that did
	// move it forward made progress: it is reopened at once, within the
	// re-watch rate limit. Default: 1s.
	ShortWatch time.Duration
	// RewatchQPS and RewatchBurst limit how often the watching phase opens
	// a WATCH: a token bucket holding RewatchBurst tokens, refilled at
	// RewatchQPS a second. A server that ends every watch after one event
	// gives no failure to back off from; this limit is what keeps it from
	// making the reflector spin. A negative RewatchQPS means no limit.
	// Defaults: 5 and 10.
	RewatchQPS   float64
	RewatchBurst int

	// BackoffInitial is the wait after a first failure. Default: 800ms.
	BackoffInitial time.Duration
	// BackoffMax caps the wait between retries. Default: 30s.
	BackoffMax time.Duration
	// BackoffFactor multiplies the wait after each further failure.
	// Default: 2.
	BackoffFactor float64
	// BackoffJitter adds up to that fraction of the wait at random, so many
	// clients do not retry in lockstep: waits lie in [d, d*(1+jitter)].
	// Negative: no jitter. Default: 1.0.
	BackoffJitter float64
	// BackoffReset is how long the reflector must go without a failure for
	// the next one to wait only BackoffInitial again. Default: 2m.
	BackoffReset time.Duration

	// ResyncPeriod is how often the store's Resync is called once the
	// first list is in; 0 means never. Resync makes no API call. Default: 0.
	ResyncPeriod time.Duration
	// Clock times the resync ticks. Default: informer.RealClock; tests
	// pass a fake one (workqueue.FakeClock) to resync without waiting.
	Clock informer.Clock

	// Trace receives a trace event for every step (see the Kind constants).
	// Default: nil, no tracing, and no cost.
	Trace informer.TraceHook
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
	if o.PageSize == 0 {
		o.PageSize = 500
	}
	if o.PageSize < 0 {
		o.PageSize = 0 // no limit parameter
	}
	if o.StreamEndedLimit <= 0 {
		o.StreamEndedLimit = 3
	}
	if o.ExpiredContinueLimit <= 0 {
		o.ExpiredContinueLimit = 1
	}
	o.WatchTimeout = orDefault(o.WatchTimeout, 5*time.Minute)
	o.WatchTimeoutJitter = jitterOrDefault(o.WatchTimeoutJitter, 1.0)
	o.ShortWatch = orDefault(o.ShortWatch, time.Second)
	if o.RewatchQPS == 0 {
		o.RewatchQPS = 5
	}
	if o.RewatchBurst <= 0 {
		o.RewatchBurst = 10
	}
	o.BackoffInitial = orDefault(o.BackoffInitial, 800*time.Millisecond)
	o.BackoffMax = orDefault(o.BackoffMax, 30*time.Second)
	if o.BackoffFactor <= 0 {
		o.BackoffFactor = 2
	}
	o.BackoffJitter = jitterOrDefault(o.BackoffJitter, 1.0)
	o.BackoffReset = orDefault(o.BackoffReset, 2*time.Minute)
	o.Clock = informer.ClockOrReal(o.Clock)
	if o.OnError == nil {
		name := o.Name
		o.OnError = func(err error) { slog.Warn("reflector failed; retrying", "reflector", name, "err", err) }
	}
	return o
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// jitterOrDefault maps 0 to the default and a negative value to "none".
func jitterOrDefault(j, def float64) float64 {
	switch {
	case j == 0:
		return def
	case j < 0:
		return 0
	}
	return j
}
