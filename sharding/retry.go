package sharding

import (
	"fmt"
	"time"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/workqueue"
)

// A fault that refuses every request for a while (a 403 while RBAC is
// being changed, a webhook down) must not leave a sharded controller
// blind or idle for long after it ends: a member cannot finish a drain it
// cannot see, nor send the PATCH that acknowledges it, and the sharder
// cannot label what it cannot see. The defaults are made for a lone
// controller: an informer backs off up to 30 s (60 s with jitter), reset
// only after two minutes without a failure, and a workqueue's default
// limiter lets ten retries a second through the whole queue, so 500 keys
// refused at once are spread over 40 s. The sharder uses the two
// below; give a member's informers and queue the same.

// RetryTuning is the reflector tuning for a sharded controller's
// informers: the LIST and WATCH backoff is capped at lease (the ring's
// LeaseDuration), so a refused informer tries again at most two leases
// apart, jitter included — unless the answer carries a Retry-After
// longer than that, which the reflector waits out whatever the cap (a
// 403 carries none). Pass it with sharedinformer.WithReflector.
func RetryTuning(lease time.Duration) reflector.Tuning {
	return reflector.Tuning{BackoffMax: lease}
}

// RetryLimiter is the rate limiter for a sharded controller's workqueue:
// each key's retries double from 5 ms up to lease, and no queue-wide
// bucket holds them back (the client's QPS already paces the requests).
// It fails unless lease is positive.
func RetryLimiter(lease time.Duration) (workqueue.RateLimiter[informer.Key], error) {
	if lease <= 0 {
		return nil, &ConfigError{Field: "lease", Reason: fmt.Sprintf("(%v) of RetryLimiter must be positive", lease)}
	}
	return workqueue.NewExponentialRateLimiter[informer.Key](5*time.Millisecond, lease)
}
