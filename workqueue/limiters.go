package workqueue

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/listwatch/informer/internal/nilcheck"
)

// DefaultRateLimiter returns client-go's default controller rate limiter
// (workqueue.DefaultTypedControllerRateLimiter): the larger of
//
//   - a per-key exponential backoff from 5ms doubling up to 1000s, so one
//     broken object is retried quickly at first, then ever more rarely;
//   - an overall token bucket of 10 retries per second with a burst of
//     100, so that many failing keys at once (the API server is down)
//     cannot turn into a storm of retries.
//
// It is the [Queue]'s default.
func DefaultRateLimiter[K comparable]() RateLimiter[K] {
	return &MaxOfRateLimiter[K]{limiters: []RateLimiter[K]{
		newExponential[K](5*time.Millisecond, 1000*time.Second),
		newBucket[K](10, 100),
	}}
}

// ExponentialRateLimiter is a per-key limiter: after a key's n-th failure
// since its last Forget (n = 1, 2, ...) it waits base·2ⁿ⁻¹, capped at max:
// with 5ms and 1000s: 5ms, 10ms, 20ms, ..., 655.36s (the 18th), then
// 1000s from the 19th on. client-go: ItemExponentialFailureRateLimiter.
// Build one with NewExponentialRateLimiter: the zero value is not ready
// for use.
type ExponentialRateLimiter[K comparable] struct {
	base, max time.Duration
	failureCounts[K]
}

// NewExponentialRateLimiter returns an ExponentialRateLimiter whose first
// delay is base and whose delays never exceed max (a base above max gives
// max every time; a base of 0 retries at once, always). It fails if either
// is negative.
func NewExponentialRateLimiter[K comparable](base, max time.Duration) (*ExponentialRateLimiter[K], error) {
	if base < 0 || max < 0 {
		return nil, fmt.Errorf("workqueue: NewExponentialRateLimiter(base=%v, max=%v): neither may be negative", base, max)
	}
	return newExponential[K](base, max), nil
}

// newExponential is NewExponentialRateLimiter for values known to be valid.
func newExponential[K comparable](base, max time.Duration) *ExponentialRateLimiter[K] {
	return &ExponentialRateLimiter[K]{base: base, max: max, failureCounts: newFailureCounts[K]()}
}

// When returns min(base·2ⁿ, max), where n is key's failure count before
// this one, and counts this failure.
func (r *ExponentialRateLimiter[K]) When(key K, _ time.Time) time.Duration {
	n := r.count(key) - 1
	if r.base == 0 {
		return 0 // 0·2ⁿ is 0 for every n, the 64th failure's too
	}
	// base·2ⁿ ≤ max exactly when base ≤ max>>n; testing that first also
	// keeps the shift from overflowing.
	if n >= 63 || r.base > r.max>>n {
		return r.max
	}
	return r.base << n
}

// FastSlowRateLimiter is a per-key limiter with two speeds: a key's first
// maxFast failures wait fast, every later one waits slow. It suits
// "retry a few times right away, then back off to once a minute".
// client-go: ItemFastSlowRateLimiter. Build one with
// NewFastSlowRateLimiter: the zero value is not ready for use.
type FastSlowRateLimiter[K comparable] struct {
	fast, slow time.Duration
	maxFast    int
	failureCounts[K]
}

// NewFastSlowRateLimiter returns a FastSlowRateLimiter. It fails if a
// delay or maxFast is negative.
func NewFastSlowRateLimiter[K comparable](fast, slow time.Duration, maxFast int) (*FastSlowRateLimiter[K], error) {
	if fast < 0 || slow < 0 || maxFast < 0 {
		return nil, fmt.Errorf("workqueue: NewFastSlowRateLimiter(fast=%v, slow=%v, maxFast=%d): none may be negative", fast, slow, maxFast)
	}
	return &FastSlowRateLimiter[K]{fast: fast, slow: slow, maxFast: maxFast, failureCounts: newFailureCounts[K]()}, nil
}

// When counts a failure of key and returns fast for its first maxFast
// failures, slow after that.
func (r *FastSlowRateLimiter[K]) When(key K, _ time.Time) time.Duration {
	if r.count(key) <= r.maxFast {
		return r.fast
	}
	return r.slow
}

// MaxOfRateLimiter combines limiters: every one of them records each
// failure, and the longest delay wins. client-go: MaxOfRateLimiter.
// Build one with NewMaxOfRateLimiter: the zero value is not ready for
// use.
type MaxOfRateLimiter[K comparable] struct {
	limiters []RateLimiter[K] // fixed at construction
}

// NewMaxOfRateLimiter returns a limiter that asks all of limiters. It
// fails if there are none or one is nil (a nil pointer in the interface
// too, the result of a constructor whose error was ignored).
func NewMaxOfRateLimiter[K comparable](limiters ...RateLimiter[K]) (*MaxOfRateLimiter[K], error) {
	if len(limiters) == 0 {
		return nil, errors.New("workqueue: NewMaxOfRateLimiter: no limiters")
	}
	for i, l := range limiters {
		if nilcheck.IsNil(l) {
			return nil, fmt.Errorf("workqueue: NewMaxOfRateLimiter: limiter %d is nil", i)
		}
	}
	return &MaxOfRateLimiter[K]{limiters: slices.Clone(limiters)}, nil
}

// When calls When on every limiter and returns the longest delay.
func (r *MaxOfRateLimiter[K]) When(key K, now time.Time) time.Duration {
	var longest time.Duration
	for _, l := range r.limiters {
		longest = max(longest, l.When(key, now))
	}
	return longest
}

// NumRequeues returns the largest count any limiter keeps for key.
func (r *MaxOfRateLimiter[K]) NumRequeues(key K) int {
	var most int
	for _, l := range r.limiters {
		most = max(most, l.NumRequeues(key))
	}
	return most
}

// Forget forgets key in every limiter.
func (r *MaxOfRateLimiter[K]) Forget(key K) {
	for _, l := range r.limiters {
		l.Forget(key)
	}
}

// failureCounts counts failures per key since the key's last Forget: the
// state of the per-key limiters, which embed it for their NumRequeues and
// Forget.
type failureCounts[K comparable] struct {
	mu       sync.Mutex
	failures map[K]int // guarded by mu; a key is absent iff its count is 0
}

func newFailureCounts[K comparable]() failureCounts[K] {
	return failureCounts[K]{failures: map[K]int{}}
}

// count records one more failure of key and returns its count, this one
// included.
func (c *failureCounts[K]) count(key K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures[key]++
	return c.failures[key]
}

// NumRequeues returns key's failure count.
func (c *failureCounts[K]) NumRequeues(key K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures[key]
}

// Forget resets key's failure count to zero.
func (c *failureCounts[K]) Forget(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.failures, key)
}
