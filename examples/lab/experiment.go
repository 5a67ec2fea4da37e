package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"github.com/schollz/progressbar/v3"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/testenv/faultproxy"
	"github.com/listwatch/informer/workqueue"
)

// settings are one configuration of the operator: the post's three knobs
// and the lab's own.
type settings struct {
	name       string        // a label for --compare's table
	workers    int           // --max-concurrent-reconciles
	syncPeriod time.Duration // --sync-period
	qps        float32       // --kube-api-qps (already resolved: 0 became 20)
	burst      int           // --kube-api-burst (0 became 30)
	crs        int           // --crs
	rtt        time.Duration // --rtt
	naive      bool          // --naive
	components []string      // --components
	idle       time.Duration // --idle
	timeout    time.Duration // --timeout
	progress   bool          // --progress
	cleanup    bool          // --cleanup
}

// env is what every run shares: the cluster and the namespace, and the
// "user's" clients, which create and delete the Clusters outside the
// operator (not throttled, not counted).
type env struct {
	cfg      *rest.Config
	user     *rest.Config // unlimited and unmetered: the lab's own setup and cleanup
	ns       string
	clusters *rest.RESTClient
	core     *rest.RESTClient
	// createdNS and createdCRD say what setUp created, so that tearDown
	// removes only that.
	createdNS, createdCRD bool
}

// result is what one run measured.
type result struct {
	s        settings
	run      string        // the run's id, in every object's run label
	t        tallyReading  // reconcile phase: until all converged
	load     meterReading  // the client's requests in that phase
	idle     meterReading  // the client's requests in the idle window
	idleT    tallyReading  // reconciles by the end of the idle window
	idleTook time.Duration // the idle window's real length
	// idleFrom and idleFromT are the counts when the idle window began:
	// the reconciles still queued when the last Cluster converged ran
	// before it.
	idleFrom  meterReading
	idleFromT tallyReading
	queue     workqueue.MetricsSnapshot
	// neverIdle: the workqueue never emptied before the idle window, so
	// each resync's work takes longer than the sync period.
	neverIdle bool
	timedOut  bool
}

// runOnce runs one experiment: create s.crs Clusters, start the operator,
// time it until every Cluster is converged, then watch it idle.
func runOnce(ctx context.Context, e env, s settings, out io.Writer) (*result, error) {
	res := &result{s: s, run: newRunID()}

	// The operator's client: through the fault proxy when --rtt is set,
	// limited by one token bucket, and metered.
	cfg := rest.CopyConfig(e.cfg)
	if s.rtt > 0 {
		proxy, err := startProxy(cfg, s.rtt)
		if err != nil {
			return nil, err
		}
		defer func() { _ = proxy.Close() }()
	}
	m := newMeter()
	cfg.QPS, cfg.Burst = s.qps, s.burst // for the record: RateLimiter below is what rest uses
	cfg.RateLimiter = m.newLimiter(s.qps, s.burst)
	cfg.Wrap(m.wrap)

	// The Clusters exist before the operator starts, as in the post: its
	// clock measures the operator, not kubectl.
	if err := createClusters(ctx, e.clusters, e.ns, res.run, s.crs, s.components); err != nil {
		return nil, err
	}
	if s.cleanup {
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if err := cleanUp(ctx, e.clusters, e.core, e.ns, res.run); err != nil {
				fmt.Fprintln(out, "cleanup:", err)
			}
		}()
	}

	var bar *progressbar.ProgressBar
	if s.progress {
		bar = progressbar.NewOptions(s.crs,
			progressbar.OptionSetWriter(out),
			progressbar.OptionSetDescription("reconciling "+s.name),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
		)
	}
	t := newTally(s.crs, func() {
		if bar != nil {
			_ = bar.Add(1)
		}
	})
	c, err := newController(cfg, e.ns, res.run, s, t)
	if err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	stopped := make(chan error, 1)
	go func() { stopped <- c.run(runCtx, s.workers) }()

	timeout := time.NewTimer(s.timeout)
	defer timeout.Stop()
	select {
	case <-t.all:
	case <-timeout.C:
		res.timedOut = true
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	res.t, res.load = t.read(), m.read()
	res.queue = c.metrics.Snapshot(time.Now())

	// Idle: nothing changes from here on. Whatever the client sends now is
	// the operator's standing cost: resyncs, and the informers re-opening
	// their watches when the server ends them (every 5 to 10 minutes).
	if s.idle > 0 && !res.timedOut {
		if s.progress {
			fmt.Fprintf(out, "idle: measuring %s with nothing changing...\n", s.idle)
		}
		// First let the reconciles that our own writes' events queued
		// finish: they belong to converging, not to idling.
		settled, err := settle(ctx, c, t, out)
		if err != nil {
			return nil, err
		}
		res.neverIdle = !settled
		res.idle, res.idleT = m.read(), t.read() // the window starts here
		base := res.idle
		start := time.Now()
		select {
		case <-time.After(s.idle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res.idleTook = time.Since(start)
		res.idleFrom, res.idleFromT = base, res.idleT
		res.idle, res.idleT = m.read(), t.read()
	}
	stop()
	if err := <-stopped; err != nil && ctx.Err() == nil && err != context.Canceled {
		return nil, err
	}
	return res, nil
}

// startProxy puts a fault proxy adding rtt to every round trip between
// the operator and the apiserver, and points cfg at it. TLS passes through
// the proxy untouched; the certificate still has to match the name we
// dial, so the original host name goes into ServerName.
func startProxy(cfg *rest.Config, rtt time.Duration) (*faultproxy.Proxy, error) {
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--rtt: cannot proxy the API server address %q", cfg.Host)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	p, err := faultproxy.Start(net.JoinHostPort(host, port))
	if err != nil {
		return nil, err
	}
	p.SetRTT(rtt)
	if net.ParseIP(host) == nil && cfg.TLSClientConfig.ServerName == "" {
		cfg.TLSClientConfig.ServerName = host
	}
	u.Host = p.Addr()
	cfg.Host = u.String()
	return p, nil
}

func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// settle waits until the workqueue has been empty, with no reconcile
// running, for half a second: the events of the operator's own last
// writes have come back and been handled. It gives up after a minute and
// says so: an operator whose resyncs take longer than its sync period
// never idles (the post's second knob).
func settle(ctx context.Context, c *controller, t *tally, out io.Writer) (bool, error) {
	deadline := time.Now().Add(time.Minute)
	quietSince, last := time.Now(), -1
	for time.Now().Before(deadline) {
		snap := c.metrics.Snapshot(time.Now())
		n := t.read().reconciles
		if snap.Depth > 0 || snap.Processing > 0 || n != last {
			quietSince, last = time.Now(), n
		} else if time.Since(quietSince) >= 500*time.Millisecond {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	fmt.Fprintln(out, "idle: the workqueue never emptied for a minute; measuring anyway (the operator is never idle)")
	return false, nil
}
