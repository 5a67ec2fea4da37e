package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
)

// Options configures a [Queue]. The zero value is a valid configuration:
// client-go's default rate limiter, the real clock, no tracing.
type Options[K comparable] struct {
	// RateLimiter decides how long AddRateLimited waits before adding a
	// key again (the queue counts each key's retries itself, for
	// NumRequeues, whatever the limiter counts).
	// It may be called with the queue's lock held, so it must be quick
	// and must not call the queue. Default: [DefaultRateLimiter], client-go's
	// default: max(per-key exponential 5ms…1000s, overall 10 qps burst 100).
	RateLimiter RateLimiter[K]

	// Clock supplies the time for delays, the rate limiter and trace
	// events. Default: the real clock. Tests and examples pass a
	// [FakeClock].
	Clock Clock

	// Trace receives an event for every change of a key's state (see the
	// Kind constants), with the queue's lock held: it must not call the
	// queue, nor step the FakeClock the queue runs on (hand the event to
	// another goroutine for that). Default nil: no tracing, and no cost:
	// no event is built and no key is formatted.
	Trace informer.TraceHook
}

// Queue is a work queue of keys, the hand-off between event handlers and
// the workers that reconcile. Handlers Add the key of an object that
// changed; workers Get a key, reconcile it from the cache, and call Done.
//
// It is not a plain FIFO of events. It holds keys, not changes, and each
// key at most once: ten updates to one object while it waits are one
// reconcile, of the latest state (level-triggered, not edge-triggered).
// And it never hands a key to a second worker while a first one holds it:
// an Add during processing is postponed until Done. That is what makes it
// different from a channel of keys, and from the DeltaFIFO upstream, which
// keeps every change of an object for the informer to apply in order.
//
// On top of that it delays keys (AddAfter, a min-heap by due time) and
// retries failures with backoff (AddRateLimited, through a [RateLimiter]).
// [Run] drives N workers over it.
//
// A Queue is safe for concurrent use. Create one with [New]; shut it down
// with ShutDown or ShutDownWithDrain.
type Queue[K comparable] struct {
	// mu guards every field below it. cond is tied to mu: Get and
	// ShutDownWithDrain wait on it (see waitLocked), and every change they
	// wait for wakes them. While the queue runs, only Gets wait, each for
	// a key, so a new key Signals one of them. Once it shuts down, Gets
	// wait for a key or for the end and ShutDownWithDrain for the drain;
	// only Done can bring any of those about then, and Done Broadcasts.
	// ShutDown itself, and a waiter's ctx ending, Broadcast too.
	mu   sync.Mutex
	cond *sync.Cond

	// queue holds the keys ready for a worker, in the order they were
	// added (first add; a second Add does not move a key). A key is in
	// queue iff it is in dirty and not in processing, so it is in queue at
	// most once.
	queue []K

	// dirty holds every key that needs processing: the queued ones, and
	// the processing ones that were added again (postponed) and will be
	// queued when their worker calls Done.
	dirty map[K]struct{}

	// processing holds the keys handed out by Get and not yet Done. Get
	// never hands out a key that is in processing, so no two workers ever
	// hold the same key.
	processing map[K]struct{}

	// shuttingDown is set once by ShutDown or ShutDownWithDrain and never
	// cleared. From then on nothing is added, no key waits for a delay and
	// no timer is armed; keys already in dirty are still handed out.
	shuttingDown bool

	// The delayed keys (delay.go). A key is in waiting iff it is in
	// waitingByKey, once at most. waiting is a min-heap by due time.
	// While !shuttingDown and len(waiting) > 0, exactly one timer is armed,
	// timer, due at timerAt == waiting[0].at; otherwise timer is nil.
	// timerGen numbers the armed timers, so a timer that fires after it
	// was replaced can tell and do nothing. waitSeq numbers the keys as
	// they start waiting, so keys due at the same time keep that order.
	waiting      waitHeap[K]
	waitingByKey map[K]*waitEntry[K]
	waitSeq      uint64
	timer        Timer
	timerAt      time.Time
	timerGen     uint64

	// failures counts each key's AddRateLimited since its last Forget
	// (NumRequeues); a key is absent when it has none. kept counts those
	// of them Run made for an error marked KeepRetrying.
	failures map[K]int
	kept     map[K]int

	// limiter, clock and trace are fixed at New and read without mu. The
	// trace hook is always called with mu held; the limiter mostly is.
	limiter RateLimiter[K]
	clock   Clock
	trace   informer.TraceHook

	// gaveUp counts Run's give-ups on q's keys (GaveUp). Atomic: Run's
	// workers add to it without mu.
	gaveUp atomic.Int64
}

// New returns an empty, running Queue configured by opts. It starts no
// goroutine: delays use one timer from opts.Clock, armed only while keys
// wait.
//
// New cannot fail, so it returns no error: every value of Options is
// valid. A nil RateLimiter or Clock means its default, and so does a nil
// pointer held in either (the *BucketRateLimiter of a constructor whose
// error was ignored, say), which would otherwise fail at its first use;
// a nil Trace means no tracing.
func New[K comparable](opts Options[K]) *Queue[K] {
	q := &Queue[K]{
		dirty:        map[K]struct{}{},
		processing:   map[K]struct{}{},
		failures:     map[K]int{},
		kept:         map[K]int{},
		waitingByKey: map[K]*waitEntry[K]{},
		limiter:      opts.RateLimiter,
		clock:        opts.Clock,
		trace:        opts.Trace,
	}
	q.cond = sync.NewCond(&q.mu)
	if nilcheck.IsNil(q.limiter) {
		q.limiter = DefaultRateLimiter[K]()
	}
	if nilcheck.IsNil(q.clock) {
		q.clock = informer.RealClock{}
	}
	return q
}

// Add marks key as needing processing. If the key is already queued, or
// being processed and already added again, nothing changes. If a worker is
// processing it, it is queued when that worker calls Done. After shutdown
// Add does nothing. Cost: O(1) amortized.
func (q *Queue[K]) Add(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(key, "")
}

// addLocked is Add with q.mu held; why is the Detail of a KindAdded event.
func (q *Queue[K]) addLocked(key K, why string) {
	if q.shuttingDown {
		if q.trace != nil {
			q.emit(KindDropped, key, "shutting down")
		}
		return
	}
	_, busy := q.processing[key]
	if _, ok := q.dirty[key]; ok {
		if q.trace != nil {
			detail := "already queued"
			if busy {
				detail = "already postponed"
			}
			q.emit(KindDeduplicated, key, detail)
		}
		return
	}
	q.dirty[key] = struct{}{}
	if busy {
		if q.trace != nil {
			q.emit(KindPostponed, key, "")
		}
		return
	}
	q.push(key, why)
}

// push appends a dirty, not-processing key to queue and signals one
// waiting Get: each new key needs only one.
func (q *Queue[K]) push(key K, why string) {
	q.queue = append(q.queue, key)
	if q.trace != nil {
		q.emit(KindAdded, key, why)
	}
	q.cond.Signal()
}

// Get blocks until a key is ready and returns it; the caller now holds the
// key and must call Done(key) when finished with it, whatever the outcome.
//
// Get returns an error instead of a key in two cases:
//   - ctx is done: ctx.Err(). If ctx is done on entry, Get returns at once,
//     even if keys are queued; a key that becomes ready as ctx ends is
//     left queued too, so that no caller starts work for a context
//     already done (TestRunStartsNoReconcileOnceItsContextIsDone).
//   - the queue is shut down and has nothing left to hand out: no key is
//     queued, and none being processed was added again: [ErrShutDown]. A
//     worker's loop ends there.
//
// Cost: O(1) amortized, plus the wait.
func (q *Queue[K]) Get(ctx context.Context) (K, error) {
	var zero K
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.waitLocked(ctx, func() bool { return len(q.queue) > 0 || q.finished() }); err != nil {
		return zero, err
	}
	// A key and ctx's end can arrive together. The key stays queued, and
	// the wake-up this Get may have taken for it (push wakes one) is
	// passed on to the next waiting Get, whose ctx may be live
	// (TestAKeyLeftQueuedByAGetWhoseContextEndedGoesToAGetWithALiveContext).
	if err := ctx.Err(); err != nil {
		if len(q.queue) > 0 {
			q.cond.Signal()
		}
		return zero, err
	}
	if len(q.queue) == 0 {
		return zero, ErrShutDown
	}
	key := q.queue[0]
	q.queue[0] = zero // let the backing array forget it
	q.queue = q.queue[1:]
	delete(q.dirty, key)
	q.processing[key] = struct{}{}
	if q.trace != nil {
		q.emit(KindGot, key, "")
	}
	return key, nil
}

// Done tells the queue that the worker holding key has finished with it.
// If key was added again meanwhile, it is queued now. Done of a key that
// no worker holds does nothing. Cost: O(1).
func (q *Queue[K]) Done(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[key]; !ok {
		return
	}
	delete(q.processing, key)
	if q.trace != nil {
		q.emit(KindDone, key, "")
	}
	if _, again := q.dirty[key]; again {
		q.push(key, "added while processing")
	}
	if q.shuttingDown {
		// Waiting Gets and ShutDownWithDrain wait for different things,
		// and this Done may give each what it waits for: wake them all.
		q.cond.Broadcast()
	}
}

// Len returns how many keys are queued, ready for a worker (not those
// being processed or waiting for a delay). It is for information, such as
// a log line; by the time you read it, it may have changed.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}
