package sharedinformer

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/listwatch/informer/metrics"
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
// resync. Measured (BenchmarkClientLimit, docs/11): Priority and Fairness
// refused none of a looping client's writes (it bounds requests in
// flight, and 4 workers hold 4), which ran at 690 to 900 writes a second
// without the limit and 97 with it; the price is a burst of 300 creates
// in 4 s instead of under 1 s, now reported rather than silent.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// descRateLimiterWait is client-go's metric of the time requests wait for
// the client's rate limiter, with its name and buckets. client-go labels
// it with the request's verb and host; a limiter is not told the verb, so
// ours has the host only.
var descRateLimiterWait = metrics.Desc{
	Name:    "rest_client_rate_limiter_duration_seconds",
	Help:    "Seconds a request waited for the client-side rate limiter before it was sent, by host.",
	Labels:  []string{"host"},
	Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0},
}

// hostOf is the host label of a rest.Config's Host, as client-go's own
// metrics write it: the URL's host and port ("10.0.0.1:6443"), or Host
// as it is when it is not a URL with a host.
func hostOf(host string) string {
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		return u.Host
	}
	return host
}

// withClientLimits returns a copy of cfg whose RateLimiter is one token
// bucket that reports throttling (see throttleReporter). Every client the
// factory makes (its informers', its discovery's and RESTClient's) shares
// it, as the clients of one client-go clientset share one. Zero QPS and
// Burst become DefaultQPS and DefaultBurst, each on its own; other values
// are kept. A caller's own RateLimiter is kept, and wrapped so that its
// waits are reported too. A negative QPS with no RateLimiter turns
// client-side limiting off, as in client-go, and then nothing waits.
//
// waits, if not nil, observes every request's wait in seconds.
func withClientLimits(cfg *rest.Config, logger func() *slog.Logger, waits metrics.Histogram) *rest.Config {
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
	cfg.RateLimiter = &throttleReporter{RateLimiter: limiter, limits: limits, logger: logger, waits: waits}
	return cfg
}

// throttleReporter is a client rate limiter that reports the time
// requests spend held back by it. client-go's rest calls Wait before
// sending every request, so the time Wait takes is the time a request
// spent throttled on the client side, before the API server ever saw it.
//
// It observes each wait in a histogram, and it logs a warning when
// requests were held back for a share of the time, not when one wait was
// long: four workers that each wait 80 ms for every request are throttled
// nearly all the time, though no single wait looks long (see
// throttleWindow).
type throttleReporter struct {
	flowcontrol.RateLimiter
	limits string              // how the limit was set, for the log
	logger func() *slog.Logger // resolved when logging: slog.Default() may change
	waits  metrics.Histogram   // nil without a metrics Registry

	held heldBack
}

// Wait waits for a token, as the wrapped limiter does, and reports the
// wait.
func (r *throttleReporter) Wait(ctx context.Context) error {
	start := time.Now()
	if report, ok := r.held.enter(start); ok {
		r.warn(report)
	}
	err := r.RateLimiter.Wait(ctx)
	end := time.Now()
	if report, ok := r.held.leave(start, end); ok {
		r.warn(report)
	}
	if r.waits != nil {
		r.waits.Observe(end.Sub(start).Seconds())
	}
	return err
}

// warn logs a throttled window, its durations written as durations.
func (r *throttleReporter) warn(report throttleReport) {
	args := []any{"heldBack", fmt.Sprintf("%.0f%%", 100*report.share), "of", report.span.Round(time.Millisecond).String(),
		"requests", report.requests, "waited", report.waited, "longest", report.longest.Round(time.Millisecond).String()}
	if report.ago > 0 {
		args = append(args, "endedAgo", report.ago.Round(time.Millisecond).String())
	}
	args = append(args, "limits", r.limits, "fix", "raise the rest.Config's QPS and Burst, or set QPS to -1 to leave limiting to the API server's priority and fairness")
	r.logger().Warn("sharedinformer: client-side throttling: requests waited for the client's rate limiter before reaching the API server", args...)
}
