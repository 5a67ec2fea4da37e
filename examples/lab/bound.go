package main

import (
	"fmt"
	"math"
	"time"
)

// bound is the arithmetic behind every figure this lab prints. Two limits
// cap how fast an operator converges N Clusters:
//
// The rate limit. Each Cluster costs c calls, and the client's token
// bucket lets at most QPS calls a second through in the long run, so
//
//	reconciles/s ≤ QPS / c
//
// In a short run the bucket's Burst helps: by time t it has let through at
// most Burst + QPS·t calls, so N Clusters take at least (N·c − Burst) / QPS.
//
// The round trips. One reconcile makes its s calls one after the other,
// each waiting a round trip (RTT), and W workers run W reconciles at once:
//
//	reconciles/s ≤ W / (s × RTT)
//
// so N Clusters take at least ⌈N/W⌉ · s · RTT.
//
// Whichever is slower wins:
//
//	reconciles/s ≤ min(QPS / c, W / (s × RTT))
//
// The server's own time comes on top, so a measured run is slower than the
// bound; a run near it is limited by the knobs, not by the code.
type bound struct {
	n     int           // Clusters
	c     float64       // calls per Cluster, until all converged (measured)
	s     float64       // sequential calls in one Cluster's first reconcile (measured)
	w     int           // workers
	qps   float64       // client QPS
	burst int           // client Burst
	rtt   time.Duration // added round trip
}

func boundOf(r *result) bound {
	b := bound{n: r.s.crs, w: r.s.workers, qps: float64(r.s.qps), burst: r.s.burst, rtt: r.s.rtt}
	if r.t.converged > 0 {
		b.c = float64(r.t.calls) / float64(r.t.converged)
		b.s = float64(r.t.firstCalls) / float64(r.t.converged)
	}
	return b
}

// byRate is the shortest time the token bucket allows: (N·c − Burst)/QPS.
func (b bound) byRate() time.Duration {
	excess := float64(b.n)*b.c - float64(b.burst)
	if excess <= 0 {
		return 0
	}
	return time.Duration(excess / b.qps * float64(time.Second))
}

// byRTT is the shortest time the round trips allow: ⌈N/W⌉·s·RTT.
func (b bound) byRTT() time.Duration {
	rounds := math.Ceil(float64(b.n) / float64(b.w))
	return time.Duration(rounds * b.s * float64(b.rtt))
}

// shortest is the larger of the two: the run can beat neither.
func (b bound) shortest() time.Duration { return max(b.byRate(), b.byRTT()) }

// explain writes the bound out with this run's numbers.
func (b bound) explain(measured time.Duration) string {
	rate := fmt.Sprintf("QPS/c = %.0f/%.1f = %.1f/s", b.qps, b.c, b.qps/b.c)
	lat := "no RTT added, so no round-trip limit beyond the server's own speed"
	if b.rtt > 0 {
		lat = fmt.Sprintf("W/(s×RTT) = %d/(%.1f×%s) = %.1f/s", b.w, b.s, b.rtt, float64(b.w)/(b.s*b.rtt.Seconds()))
	}
	text := fmt.Sprintf("Fastest possible: reconciles/s ≤ min(%s; %s).\n", rate, lat)
	text += fmt.Sprintf("  For %d Clusters: rate ≥ (N·c − Burst)/QPS = (%d×%.1f − %d)/%.0f = %s; round trips ≥ ⌈N/W⌉·s·RTT = %s.\n",
		b.n, b.n, b.c, b.burst, b.qps, round(b.byRate()), round(b.byRTT()))
	if best := b.shortest(); best > 10*time.Millisecond {
		text += fmt.Sprintf("  Measured %s after the caches synced: %.0f%% of the fastest possible throughput.\n", round(measured), 100*best.Seconds()/measured.Seconds())
	} else {
		text += fmt.Sprintf("  The fastest possible is %s: at these settings the knobs do not limit this run; the server and this machine do (measured %s).\n",
			round(best), round(measured))
	}
	return text
}

// round shortens a duration for printing.
func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
