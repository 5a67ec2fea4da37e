package sharedinformer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// The factory's client limits when the rest.Config leaves them zero, where
// client-go's rest would use 5 requests a second and a burst of 10.
//
// 5/s dates from before the API server protected itself from busy clients
// (API Priority and Fairness, on by default since Kubernetes 1.20). At 5/s
// a controller that writes once for each of 200 new objects needs 40 s,
// and at its default verbosity client-go says so only when one request
// waits more than a second, which with a few workers never happens: two
// workers sharing 5 tokens a second wait 400 ms each, every time.
// controller-runtime raised its default to 20/s, burst 30, and since 2025
// (its pull request 3119) turns the client-side limit off altogether. We
// keep a limit, as a seatbelt against a reconcile that loops on writes,
// but one a controller does not meet in its ordinary work: 50 requests a
// second sustained, and a burst of 100 for a batch of new objects or a
// resync.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// When a request waits longer than throttleThreshold for the client's rate
// limiter, the factory logs it, at most once per throttleReportEvery. A
// wait of 100 ms is half a token at client-go's 5/s and five at our 50/s:
// the requests are queueing, not just spaced out.
const (
	throttleThreshold   = 100 * time.Millisecond
	throttleReportEvery = 10 * time.Second
)

// withClientLimits returns a copy of cfg whose RateLimiter is one token
// bucket that reports throttling. Every client the factory makes (its
// informers', its discovery's and RESTClient's) shares it, as the clients
// of one client-go clientset share one. Zero QPS and Burst become
// DefaultQPS and DefaultBurst, each on its own; other values are kept. A
// caller's own RateLimiter is kept, and wrapped so that its waits are
// reported too. A negative QPS with no RateLimiter turns client-side
// limiting off, as in client-go, and then nothing waits.
func withClientLimits(cfg *rest.Config, logger func() *slog.Logger) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	limiter := cfg.RateLimiter
	limits := "the rest.Config's RateLimiter"
	if limiter == nil {
		if cfg.QPS == 0 {
			cfg.QPS = DefaultQPS
		}
		if cfg.Burst == 0 {
			cfg.Burst = DefaultBurst
		}
		if cfg.QPS < 0 {
			return cfg
		}
		limiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
		limits = fmt.Sprintf("QPS %g, burst %d", cfg.QPS, cfg.Burst)
	}
	cfg.RateLimiter = &throttleReporter{RateLimiter: limiter, limits: limits, logger: logger}
	return cfg
}

// throttleReporter is a client rate limiter that logs the requests it
// holds back. client-go's rest calls Wait before sending every request,
// so the time Wait takes is the time a request spent throttled on the
// client side, before the API server ever saw it.
type throttleReporter struct {
	flowcontrol.RateLimiter
	limits string              // how the limit was set, for the log
	logger func() *slog.Logger // resolved when logging: slog.Default() may change

	// mu guards the fields below. waited and longest describe the waits
	// over throttleThreshold since the last report, at lastReport (zero
	// before the first).
	mu         sync.Mutex
	waited     int
	longest    time.Duration
	lastReport time.Time
}

// Wait waits for a token, as the wrapped limiter does, and reports the
// wait if it was long.
func (r *throttleReporter) Wait(ctx context.Context) error {
	start := time.Now()
	err := r.RateLimiter.Wait(ctx)
	if d := time.Since(start); d > throttleThreshold {
		r.observe(d)
	}
	return err
}

// observe counts one long wait and logs the waits counted so far if the
// last report is throttleReportEvery old.
func (r *throttleReporter) observe(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waited++
	r.longest = max(r.longest, d)
	now := time.Now()
	if !r.lastReport.IsZero() && now.Sub(r.lastReport) < throttleReportEvery {
		return
	}
	r.logger().Warn("sharedinformer: client-side throttling: requests waited for the client's rate limiter before reaching the API server",
		"requests", r.waited, "longest", r.longest.Round(time.Millisecond), "over", throttleThreshold,
		"limits", r.limits, "fix", "raise the rest.Config's QPS and Burst")
	r.waited, r.longest, r.lastReport = 0, 0, now
}
