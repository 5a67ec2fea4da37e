package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func (s settings) mode() string {
	if s.naive {
		return "naive (GET from the API, write every time)"
	}
	return "cache-reading, write on drift"
}

func (s settings) knobs() string {
	return fmt.Sprintf("--max-concurrent-reconciles=%d --sync-period=%s --kube-api-qps=%g --kube-api-burst=%d --rtt=%s",
		s.workers, s.syncPeriod, s.qps, s.burst, s.rtt)
}

// idleRate is the client's requests per second in the idle window.
func (r *result) idleRate() float64 {
	if r.idleTook == 0 {
		return 0
	}
	return float64(r.idle.total-r.idleFrom.total) / r.idleTook.Seconds()
}

// report prints what one run measured, each figure with what it means.
func report(out io.Writer, r *result) {
	s, t := r.s, r.t
	fmt.Fprintf(out, "\nOperator lab: %d Clusters × %d components (%s), reconcile: %s\n",
		s.crs, len(s.components), strings.Join(s.components, ","), s.mode())
	fmt.Fprintf(out, "  knobs: %s\n", s.knobs())
	if r.timedOut {
		fmt.Fprintf(out, "TIMED OUT: %d of %d Clusters reconciled after %s.\n", t.converged, s.crs, round(t.elapsed))
	} else {
		fmt.Fprintf(out, "All %d Clusters reconciled in %s (caches synced after %s): %s per Cluster.\n",
			s.crs, round(t.elapsed), round(t.synced), round(t.elapsed/time.Duration(s.crs)))
	}
	if t.converged > 0 {
		fmt.Fprintf(out, "Calls per reconcile: %.1f, made one after another by the reconcile that first converged each Cluster.\n",
			float64(t.firstCalls)/float64(t.converged))
		fmt.Fprintf(out, "  Until all converged, %d reconciles ran and made %d calls (%.1f per Cluster); the events of our own writes\n"+
			"  bring each Cluster back to the queue, and those later reconciles find %s.\n",
			t.reconciles, t.calls, float64(t.calls)/float64(t.converged), laterFind(s))
	}
	if t.failures > 0 {
		fmt.Fprintf(out, "  %d reconciles failed and were retried; the last: %v\n", t.failures, t.lastErr)
	}
	l := r.load
	fmt.Fprintf(out, "Client-side throttling: %d waits, %s in all (longest %s); %d over 50ms (client-go logs those at -v=3), %d over 1s (logged by default, at most once per 10s).\n",
		l.waits, round(l.waited), round(l.longest), l.waits50, l.waits1)
	fmt.Fprintln(out, "API calls by verb until all reconciled (the operator client's own requests, counted as they left it):")
	printVerbs(out, l.byVerb, l.total)
	fmt.Fprint(out, boundOf(r).explain(t.elapsed-t.synced))
	q := r.queue
	fmt.Fprintf(out, "Workqueue: %d adds; waited in the queue %s on average (at most %s); reconciles took %s on average (at most %s).\n",
		q.Adds, round(q.QueueWait.Mean()), round(q.QueueWait.Max), round(q.WorkDuration.Mean()), round(q.WorkDuration.Max))
	if r.idleTook > 0 {
		from, fromT := r.idleFrom, r.idleFromT
		reconciles, calls := r.idleT.reconciles-fromT.reconciles, r.idleT.calls-fromT.calls
		fmt.Fprintf(out, "Idle: %d requests in %s with nothing changing = %.3f req/s (%d reconciles ran, from resyncs, making %d calls).\n",
			r.idle.total-from.total, round(r.idleTook), r.idleRate(), reconciles, calls)
		if r.idle.total > from.total {
			printVerbs(out, diff(r.idle.byVerb, from.byVerb), r.idle.total-from.total)
		}
	}
}

// laterFind says what the reconciles after the first one do.
func laterFind(s settings) string {
	if s.naive {
		return "nothing to change but still GET and PUT everything"
	}
	return "nothing to change in the cache and make no call"
}

func printVerbs(out io.Writer, byVerb map[string]int, total int) {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range byVerb {
			if !yield(k) {
				return
			}
		}
	})
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  verb\tresource\tcalls\t")
	for _, k := range keys {
		verb, resource, _ := strings.Cut(k, " ")
		fmt.Fprintf(w, "  %s\t%s\t%d\t\n", verb, resource, byVerb[k])
	}
	fmt.Fprintf(w, "  total\t\t%d\t\n", total)
	_ = w.Flush()
}

func diff(after, before map[string]int) map[string]int {
	d := map[string]int{}
	for k, v := range after {
		if v -= before[k]; v != 0 {
			d[k] = v
		}
	}
	return d
}
