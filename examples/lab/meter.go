package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/flowcontrol"
)

// A meter watches the operator's client from the inside, at the two places
// rest lets you hook in:
//
//   - rest.Config.WrapTransport: every HTTP request the client sends passes
//     through our round-tripper, which counts it by verb and resource. These
//     are the client's requests, counted as they leave; the server may see a
//     few more (rest retries some answers by itself) and the audit log is
//     the place to count those. Watches count once, when they open.
//   - rest.Config.RateLimiter: the client-side limiter every request waits
//     on before it is sent (QPS/Burst). We give rest a token bucket of our
//     own, wrapped so that each wait is timed. That is the "client-side
//     throttling" the StarRocks post saw in its logs: client-go logs a
//     wait over 50ms at -v=3, and one over 1s by default but at most once
//     every 10 seconds (rest's globalThrottledLogger). So a log shows "1
//     throttling" where hundreds of requests waited; we count every wait.
//
// (rest also has metrics hooks, k8s.io/client-go/tools/metrics, but they
// are process-wide globals: two lab runs side by side would mix.)
type meter struct {
	total atomic.Int64 // every request sent

	mu       sync.Mutex     // guards the fields below
	byVerb   map[string]int // "create configmaps" → count
	waits    int            // limiter waits longer than 1ms: the request was throttled
	waited   time.Duration  // their total
	waits50  int            // waits over 50ms: client-go logs these at -v=3
	waits1s  int            // waits over 1s: client-go logs these by default
	longest  time.Duration  // the longest wait
	requests int            // limiter waits in all, throttled or not
}

func newMeter() *meter { return &meter{byVerb: map[string]int{}} }

// callsKey marks a reconcile's context: requests sent with it add to the
// counter it holds, so we know how many calls each reconcile made.
type callsKey struct{}

func withCallCounter(ctx context.Context, c *atomic.Int64) context.Context {
	return context.WithValue(ctx, callsKey{}, c)
}

// wrap is a rest.Config.WrapTransport.
func (m *meter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		m.total.Add(1)
		verb := verbOf(req)
		m.mu.Lock()
		m.byVerb[verb]++
		m.mu.Unlock()
		if c, ok := req.Context().Value(callsKey{}).(*atomic.Int64); ok {
			c.Add(1)
		}
		return next.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// verbOf names a request the way the audit log and RBAC do: "list
// clusters", "update clusters/status", "watch configmaps".
func verbOf(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api": // /api/v1/<rest>
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis": // /apis/<group>/<version>/<rest>
		parts = parts[3:]
	default:
		return strings.ToLower(r.Method) + " " + r.URL.Path
	}
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:] // namespaces/<ns>/<resource>...
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	var verb string
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(r.Method)
	}
	return verb + " " + resource
}

// timedLimiter is the client's token bucket, with each Wait timed.
type timedLimiter struct {
	flowcontrol.RateLimiter
	m *meter
}

// newLimiter returns the limiter every rest client of the operator shares:
// one bucket of qps tokens a second holding up to burst, as
// controller-runtime's manager has for its client.
func (m *meter) newLimiter(qps float32, burst int) flowcontrol.RateLimiter {
	return timedLimiter{flowcontrol.NewTokenBucketRateLimiter(qps, burst), m}
}

func (l timedLimiter) Wait(ctx context.Context) error {
	start := time.Now()
	err := l.RateLimiter.Wait(ctx)
	d := time.Since(start)
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.m.requests++
	if d > time.Millisecond {
		l.m.waits++
		l.m.waited += d
		l.m.longest = max(l.m.longest, d)
	}
	if d > 50*time.Millisecond {
		l.m.waits50++
	}
	if d > time.Second {
		l.m.waits1s++
	}
	return err
}

// meterReading is a meter's counts at one moment.
type meterReading struct {
	total                  int
	byVerb                 map[string]int
	waits, waits50, waits1 int
	waited, longest        time.Duration
}

func (m *meter) read() meterReading {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := meterReading{
		total: int(m.total.Load()), byVerb: make(map[string]int, len(m.byVerb)),
		waits: m.waits, waits50: m.waits50, waits1: m.waits1s, waited: m.waited, longest: m.longest,
	}
	for k, v := range m.byVerb {
		r.byVerb[k] = v
	}
	return r
}
