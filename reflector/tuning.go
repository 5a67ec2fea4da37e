package reflector

import "time"

// InitialList chooses what the first LIST asks the server for.
type InitialList int

const (
	// ListConsistent asks for resourceVersion "": a consistent read, as new
	// as the server's storage, answered in pages of Tuning.PageSize.
	// Servers since 1.31 serve it from their watch cache once the cache has
	// caught up with etcd, so it costs etcd little. The default.
	ListConsistent InitialList = iota
	// ListAny asks for resourceVersion "0": whatever state the server has at
	// hand, from its watch cache. It is the cheapest read, but may be older
	// than what another client already saw, and the watch cache ignores
	// limit, so the whole collection comes in one response however large.
	// It is what client-go's reflector (v0.37) asks for in its first
	// LIST; a later one asks for the last resourceVersion it saw, or ""
	// after a 410 (its relistResourceVersion). But by default it streams
	// its initial list instead (StreamingList) and LISTs at "0" only when
	// the stream fails (a server that does not support it, say) or its
	// ListerWatcher cannot stream.
	ListAny
)

// Tuning is how a reflector lists, watches and retries: every field has
// the default its comment gives, used when the field is left zero. It is
// all of Options that a shared informer lets its user set; the rest
// (what to list, where to put it, resync, tracing) the informer decides.
type Tuning struct {
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
	// reflector falls back to LIST for the rest of Run. Default: off.
	// client-go's reflector streams by default since v0.35 (its
	// WatchListClient feature) and, when the stream fails, LISTs at
	// resourceVersion "0" (ListAny).
	StreamingList bool
	// StreamEndedLimit is how many streaming lists of one Run may end
	// before their end bookmark, since the last that reached it, before the reflector
	// lists instead for the rest of Run (a stream refused or answered
	// with an ERROR event between them neither counts nor starts the
	// count again). One such end is usually a cut connection, and streams again;
	// the same end again and again is a server that ignores
	// sendInitialEvents. A refusal (a 4xx answer, not 429 or 410) falls
	// back at once.
	// Default: 3.
	StreamEndedLimit int

	// HoldBack is the longest one LIST request (a page, or the whole
	// list unpaged) waits, in all, for a store that is a RoomWaiter to
	// have room for its next part (the informer's, when
	// it has popped too little of what is queued). Past it the rest of
	// the request is handed over regardless: kube-apiserver ends a LIST
	// not read within its request timeout (60s by default), and a
	// rest.Config.Timeout ends it sooner, so a list held back too long
	// would fail and start over, and never finish. The factory sets it to
	// a quarter of its rest.Config's Timeout when that is shorter.
	// Negative: never wait. Default: DefaultHoldBack.
	HoldBack time.Duration

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
	// BackoffMax caps the base wait between retries; BackoffJitter adds
	// to it, so at the default jitter a wait reaches up to twice
	// BackoffMax. Default: 30s.
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
}

// DefaultHoldBack is Tuning.HoldBack's default: a quarter of
// kube-apiserver's default request timeout (60s), which bounds a LIST.
const DefaultHoldBack = 15 * time.Second

// withDefaults returns t with every zero field set to its default.
func (t Tuning) withDefaults() Tuning {
	if t.PageSize == 0 {
		t.PageSize = 500
	}
	if t.PageSize < 0 {
		t.PageSize = 0 // no limit parameter
	}
	if t.StreamEndedLimit <= 0 {
		t.StreamEndedLimit = 3
	}
	if t.ExpiredContinueLimit <= 0 {
		t.ExpiredContinueLimit = 1
	}
	if t.HoldBack == 0 {
		t.HoldBack = DefaultHoldBack
	}
	t.WatchTimeout = orDefault(t.WatchTimeout, 5*time.Minute)
	t.WatchTimeoutJitter = jitterOrDefault(t.WatchTimeoutJitter, 1.0)
	t.ShortWatch = orDefault(t.ShortWatch, time.Second)
	if t.RewatchQPS == 0 {
		t.RewatchQPS = 5
	}
	if t.RewatchBurst <= 0 {
		t.RewatchBurst = 10
	}
	t.BackoffInitial = orDefault(t.BackoffInitial, 800*time.Millisecond)
	t.BackoffMax = orDefault(t.BackoffMax, 30*time.Second)
	if t.BackoffFactor <= 0 {
		t.BackoffFactor = 2
	}
	t.BackoffJitter = jitterOrDefault(t.BackoffJitter, 1.0)
	t.BackoffReset = orDefault(t.BackoffReset, 2*time.Minute)
	return t
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
