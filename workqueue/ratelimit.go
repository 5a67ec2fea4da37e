package workqueue

import (
	"fmt"
	"time"
)

// RateLimiter decides how long a failed key waits before its retry. It is
// bookkeeping only: it remembers failures and computes delays, and the
// [Queue] does the waiting (AddRateLimited = When, then AddAfter).
//
// Time comes in as an argument, from the queue's [Clock], so a limiter
// holds no clock and its arithmetic can be tested with plain values.
//
// The limiters here are per-key ([NewExponentialRateLimiter],
// [NewFastSlowRateLimiter]: each key's own failure count sets its delay),
// overall ([NewBucketRateLimiter]: all keys share one budget of retries
// per second), or a combination ([NewMaxOfRateLimiter]).
// [DefaultRateLimiter] combines one of each.
//
// Implementations must be safe for concurrent use. A Queue may call them
// with its lock held, so they must be quick and must not call the Queue.
type RateLimiter[K comparable] interface {
	// When records one more failure of key, at time now, and returns how
	// long to wait before retrying it.
	When(key K, now time.Time) time.Duration
	// NumRequeues returns how many failures of key were recorded since its
	// last Forget. An overall limiter, which counts no keys, returns 0.
	NumRequeues(key K) int
	// Forget clears key's failures, so its next failure starts from the
	// shortest delay again. Call it when key succeeds; until then a
	// per-key limiter keeps the key in memory.
	Forget(key K)
}

// AddRateLimited adds key again after the delay its rate limiter gives: a
// retry with backoff, counted by NumRequeues. Use it when processing key
// failed; [Run] does it for you. After shutdown it does nothing (the
// failure is not even counted).
func (q *Queue[K]) AddRateLimited(key K) {
	q.addRateLimited(key, false)
}

// addRateLimited is AddRateLimited, returning for Run's log the retry's
// number and delay, and queued false if the queue is shut down.
func (q *Queue[K]) addRateLimited(key K, kept bool) (retry int, delay time.Duration, queued bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		q.addAfterLocked(key, 0) // drops it, and says so
		return 0, 0, false
	}
	delay = q.limiter.When(key, q.clock.Now())
	q.failures[key]++
	if kept {
		q.kept[key]++
	}
	retry = q.failures[key]
	if q.trace != nil {
		q.emit(KindRequeued, key, fmt.Sprintf("retry %d in %s", retry, delay))
	}
	q.addAfterLocked(key, delay)
	return retry, delay, true
}

// ownRequeues is NumRequeues less the retries of errors marked
// KeepRetrying: what RunOptions.MaxRetries caps
// (TestRetriesMarkedKeepRetryingLeaveAKeyItsOwnMaxRetries).
func (q *Queue[K]) ownRequeues(key K) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[key] - q.kept[key]
}

// Forget tells the rate limiter that key succeeded: its failures are
// cleared, and its next AddRateLimited starts from the shortest delay.
// It does not remove key from the queue. [Run] calls it after every
// successful reconcile.
func (q *Queue[K]) Forget(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.kept, key)
	if _, failed := q.failures[key]; failed {
		delete(q.failures, key)
		if q.trace != nil {
			q.emit(KindForgotten, key, "")
		}
	}
	q.limiter.Forget(key)
}

// NumRequeues returns how many times key failed (AddRateLimited) since it
// was last forgotten. A controller can use it to give up after N retries.
// The queue counts them itself, whatever its limiter: an overall one
// (NewBucketRateLimiter) counts no keys, and RunOptions.MaxRetries must
// hold with it too (TestMaxRetriesCapsRetriesWhateverTheRateLimiter).
func (q *Queue[K]) NumRequeues(key K) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[key]
}
