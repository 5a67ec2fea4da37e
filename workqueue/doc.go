// Package workqueue is where event handling ends and real work begins: a
// queue of keys that deduplicates, delays and retries with backoff, and
// [Run], which drives N workers over it. client-go calls it
// k8s.io/client-go/util/workqueue; this package keeps its words (Add, Get,
// Done, Forget, NumRequeues, AddAfter, AddRateLimited, ShutDown,
// ShutDownWithDrain) so what you learn here carries over.
//
// # Where it sits
//
//	handler (listener goroutine) ──Add(key)──▶ Queue ──Get──▶ worker 1..N ──▶ reconcile(ctx, key)
//	                                             ▲                               │ reads a lister,
//	                                             └─Done / Forget / AddRateLimited┘ writes the API
//
// Event handlers must stay quick (pitfall 5): a slow handler falls behind,
// its buffer of events grows, and everything it should trigger waits
// (here it delays only itself; in client-go before per-handler buffers it
// held up every handler). So a handler only computes the object's key and
// calls Add. Workers, as many as you allow, Get keys and reconcile each
// from the informer's cache, the current state, not the event that
// triggered it. A key added ten times while it waits is reconciled once.
//
// # Usage
//
//	q := workqueue.New(workqueue.Options[informer.Key]{}) // client-go's default backoff
//	defer q.ShutDown()
//	// in the informer's event handlers:
//	q.Add(key)
//	// the workers; Run returns when ctx is done and the reconciles in flight have returned:
//	workqueue.Run(ctx, q, reconcile, workqueue.RunOptions[informer.Key]{Workers: 4})
//
// Run does, per key, what a hand-written worker loop does:
//
//	key, err := q.Get(ctx) // blocks; ErrShutDown or ctx.Err() ends the loop
//	result, err := reconcile(ctx, key)
//	switch {
//	case err == nil: // done, or done for now
//		q.Forget(key)
//		if result.RequeueAfter > 0 { q.AddAfter(key, result.RequeueAfter) }
//	case isTerminal(err): // workqueue.Terminal(err): retrying cannot help
//		q.Forget(key)
//	default: // retry with backoff
//		q.AddRateLimited(key)
//	}
//	q.Done(key) // always, and last
//
// Run's OnError hears of every failure; GivenUp(err) says whether Run
// gave that key up (a Terminal mark where the reconcile put it, or
// MaxRetries spent) or retries it.
//
// To stop without dropping queued work, call q.ShutDownWithDrain(ctx)
// while Run still runs: the workers finish what is queued, then Run
// returns by itself. What waits is dropped: a key waiting for a delay,
// and one a Gate holds, which the workers let go without reconciling it
// (TestShutDownWithDrainDropsAKeyAGateHoldsAsItDropsADelayedOne).
//
// # Invariants
//
//   - A key is queued at most once; Add of a queued key changes nothing,
//     not even its place. Keys are handed out in the order they were
//     first added (TestGetHandsOutKeysInTheOrderTheyWereFirstAdded).
//   - A key is never held by two workers: Add of a key being processed is
//     postponed, and the key is queued again at its Done. So no Add is
//     lost in the hand-off: as long as workers run, every Add is followed
//     by a processing of its key that starts after it. Proved by
//     TestAddOfAKeyBeingProcessedIsPostponedUntilDone and
//     TestManyProducersAndWorkersProcessEveryKeyAfterItsLastAddAndNeverTwiceAtOnce.
//   - A key waits for a delay at most once; the earlier due time wins.
//     Waiting keys live in a min-heap with one timer for the earliest, so
//     no goroutine sleeps per key, and the Queue runs no goroutine of its
//     own (the real clock runs the timer's function on a short-lived one).
//     Proved by TestAddAfterOfAWaitingKeyKeepsTheEarlierDueTime,
//     TestOneTimerIsArmedForTheEarliestWaitingKey and
//     TestAQueueRunsNoGoroutineOfItsOwn.
//   - After shutdown nothing is added and nothing waits: delayed keys are
//     dropped and the timer stopped. Queued keys are still handed out,
//     and ShutDownWithDrain waits until they and the keys in flight are
//     Done. Proved by TestShutDownIgnoresNewKeysButStillHandsOutQueuedOnes,
//     TestShutDownDropsDelayedKeysAndStopsTheTimer and
//     TestShutDownWithDrainWaitsForQueuedInFlightAndPostponedWork.
//
// # The knob: Workers
//
// RunOptions.Workers, controller-runtime's MaxConcurrentReconciles, is how
// many reconciles run at once. Reconciles spend most of their time waiting
// for the API server, so with one worker those waits add up one after
// another; with many they overlap. The StarRocks operator post measured
// 50 objects with 100 ms of latency added each way (200 ms round trips):
// 41.1 s with 1 worker (client QPS 20), 0.22 s with 50 workers (QPS 100).
// This project's lab (examples/lab, docs/11) measured 42.4 s and 1.73 s.
// The post's 0.22 s cannot be reproduced as described: one reconcile's
// four calls in a row already take 800 ms. Note the second knob in that
// line: more workers make more requests, so raise the client's QPS and
// Burst with them, or its rate limiter becomes the bottleneck instead.
// However many workers run, no key is ever processed by two at once.
//
// # Holding one key back: Gate
//
// RunOptions.Gate is asked before each reconcile whether its key must
// wait, and for what: a channel to wake it, and a time after which it is
// asked again anyway. A held key is let go (Done, no reconcile) and added
// again then; the worker takes the next key, so one slow key never pauses
// the others. package readyourwrites' Guard is the Gate that holds a key
// until the cache shows what its last reconcile wrote.
//
// # Rate limiters
//
// AddRateLimited asks the queue's [RateLimiter] for a delay and calls
// AddAfter with it. [DefaultRateLimiter] is client-go's default: the larger
// of a per-key exponential backoff (5ms, 10ms, 20ms, ... up to 1000s) and
// a token bucket shared by all keys (10 retries a second, bursts of 100).
// Forget resets a key's backoff; Run calls it after each success.
//
// # Locking and time
//
// One mutex guards a Queue. Get and ShutDownWithDrain wait on a sync.Cond
// tied to it, in sync.Cond's documented loop: `for !condition() {
// cond.Wait() }`, with the context's end broadcast on the Cond. The
// rate limiter and the trace hook are called with the lock held, so they
// must be quick and must not call the queue. All time comes from
// Options.Clock, so tests and examples can use a [FakeClock] and never
// sleep.
//
// # Tracing and metrics
//
// With Options.Trace set, every change of a key's state emits an
// [informer.TraceEvent] with Stage [informer.StageWorkqueue] and one of the
// Kind constants (KindAdded, KindDeduplicated, KindPostponed, KindDelayed,
// KindRequeued, KindGot, KindDone, ...). One queue's events arrive one at
// a time, in the order the changes happened. [Metrics] derives depth,
// adds, queue wait, work duration, retries, longest running and
// unfinished work from those events alone. With no hook, no event is
// built and no key is formatted.
//
// # client-go names
//
// [Queue] is client-go's three layered types in one: Typed (dedup and
// Done), the delaying queue (AddAfter) and the rate-limiting queue
// (AddRateLimited, Forget, NumRequeues). Where it differs: Get takes a
// ctx and returns (key, error) instead of (item, shutdown bool);
// ShutDownWithDrain takes a ctx and returns an error; [RateLimiter.When]
// is given the time, so limiters need no clock; delays need no goroutine
// (client-go runs a waiting loop with a 10 s heartbeat). The limiters map
// one to one: ItemExponentialFailureRateLimiter is [ExponentialRateLimiter],
// ItemFastSlowRateLimiter [FastSlowRateLimiter], BucketRateLimiter
// [BucketRateLimiter], MaxOfRateLimiter [MaxOfRateLimiter], and
// DefaultTypedControllerRateLimiter [DefaultRateLimiter]. [Run] is the
// worker loop client-go leaves to you (its sample-controller's
// runWorker), with controller-runtime's panic recovery.
package workqueue
