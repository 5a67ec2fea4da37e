package workqueue

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// BucketRateLimiter is an overall limiter: one token bucket shared by all
// keys, which caps the rate of retries of the whole queue, whichever keys
// fail. client-go adapts golang.org/x/time/rate for this (BucketRateLimiter);
// this is the same arithmetic, written out, but for burst 0: x/time/rate's
// reservation then never succeeds and client-go's limiter would hold a
// key back for ever, where this one spaces every retry 1/qps apart.
//
// The bucket holds up to burst tokens and refills at qps tokens per second.
// Every When takes a token. If one is there, the retry may happen now (0);
// if not, When takes it from the future anyway, pushing the balance below
// zero, and returns how long until the bucket has refilled to it. So a
// burst of failures is spread out at qps: with qps 10 and burst 100 and a
// full bucket, 100 retries go at once, the next at +100ms, +200ms, ...
//
// It keeps no per-key state: NumRequeues is always 0 and Forget does
// nothing, which is why it is combined with a per-key limiter through
// [NewMaxOfRateLimiter]. Build one with NewBucketRateLimiter: the zero
// value is not ready for use.
type BucketRateLimiter[K comparable] struct {
	qps, burst float64 // fixed at construction

	mu sync.Mutex
	// tokens is the bucket's balance as of last: at most burst, and
	// negative when retries have been promised for the future (-tokens of
	// them). Guarded by mu, like last.
	tokens float64
	// last is the time of the latest refill; zero before the first When.
	// It never moves back, so a caller whose now is a little stale cannot
	// refill the bucket twice.
	last time.Time
}

// NewBucketRateLimiter returns a BucketRateLimiter with a full bucket.
// It fails unless qps > 0 and burst ≥ 0: a bucket that never refills
// would delay retries forever.
func NewBucketRateLimiter[K comparable](qps float64, burst int) (*BucketRateLimiter[K], error) {
	if !(qps > 0) || burst < 0 {
		return nil, fmt.Errorf("workqueue: NewBucketRateLimiter(qps=%v, burst=%d): need qps > 0 and burst ≥ 0", qps, burst)
	}
	return newBucket[K](qps, burst), nil
}

// newBucket is NewBucketRateLimiter for values known to be valid.
func newBucket[K comparable](qps float64, burst int) *BucketRateLimiter[K] {
	return &BucketRateLimiter[K]{qps: qps, burst: float64(burst), tokens: float64(burst)}
}

// When refills the bucket for the time passed since the last call, takes
// one token, and returns how long until that token exists: 0 if it was
// there, else (tokens owed) / qps, or the longest Duration if that is
// longer still. Every key is treated the same.
func (r *BucketRateLimiter[K]) When(_ K, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last.IsZero() {
		r.last = now
	}
	if now.After(r.last) {
		r.tokens = min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.qps)
		r.last = now
	}
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	owed := float64(time.Second) * -r.tokens / r.qps
	if owed >= math.MaxInt64 { // beyond the longest Duration, where a conversion would wrap below zero
		return math.MaxInt64
	}
	return time.Duration(owed)
}

// NumRequeues returns 0: the bucket counts no keys.
func (r *BucketRateLimiter[K]) NumRequeues(K) int { return 0 }

// Forget does nothing: the bucket remembers no keys.
func (r *BucketRateLimiter[K]) Forget(K) {}
