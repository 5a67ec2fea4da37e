package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// A table of --compare: one of the post's three experiments, with the
// configurations it compared and what the post measured for each.
type table struct {
	title   string
	idle    bool // measures idle traffic, not time to converge
	rows    []settings
	post    []string // the post's figure for each row
	results []*result
}

// postTables builds the post's three experiments at the post's sizes,
// unless a flag was given: --crs, --rtt, --sync-period (and 15 times it,
// the post's 2m → 30m), --components and --naive apply to every run.
func postTables(s settings, set map[string]bool) []*table {
	crs := func(post int) int {
		if set["crs"] {
			return s.crs
		}
		return post
	}
	rtt := 200 * time.Millisecond
	if set["rtt"] {
		rtt = s.rtt
	}
	syncs := []time.Duration{2 * time.Minute, 30 * time.Minute}
	if set["sync-period"] {
		syncs = []time.Duration{s.syncPeriod, 15 * s.syncPeriod}
	}
	with := func(name string, workers int, qps float32, burst int, n int, rtt time.Duration) settings {
		r := s
		r.name, r.workers, r.qps, r.burst, r.crs, r.rtt, r.idle = name, workers, qps, burst, n, rtt, 0
		return r
	}
	// post is the post's figures for a table of postN Clusters, or a note
	// that they are not comparable when --crs chose another size.
	post := func(postN int, figures ...string) []string {
		if crs(postN) == postN {
			return figures
		}
		out := make([]string, len(figures))
		for i := range out {
			out[i] = fmt.Sprintf("(post: %d Clusters)", postN)
		}
		return out
	}
	knob1 := &table{
		title: fmt.Sprintf("Knob 1, workers: %d Clusters at RTT %s (%s)", crs(50), rtt, s.mode()),
		rows: []settings{
			with("default (1 worker, 20/30)", 1, 20, 30, crs(50), rtt),
			with("patched (50 workers, 100/200)", 50, 100, 200, crs(50), rtt),
		},
		post: post(50, "41.1s", "0.22s"),
	}
	knob2 := &table{
		title: fmt.Sprintf("Knobs 1 and 2, workers and QPS: %d Clusters, no RTT added (%s)", crs(100), s.mode()),
		rows: []settings{
			with("default (1 worker, 20/30)", 1, 20, 30, crs(100), 0),
			with("workers only (50 workers, 20/30)", 50, 20, 30, crs(100), 0),
			with("all knobs (50 workers, 100/200)", 50, 100, 200, crs(100), 0),
		},
		post: post(100, "8.9s, 0 throttled", "5.99s, 1 throttled", "0.60s, 0 throttled"),
	}
	knob3 := &table{
		title: fmt.Sprintf("Knob 3, sync period: idle traffic of %d Clusters over %s", crs(100), s.idle),
		idle:  true,
	}
	for _, naive := range []bool{true, false} {
		for i, sp := range syncs {
			mode := "write on drift"
			if naive {
				mode = "naive"
			}
			r := with(fmt.Sprintf("sync %s, %s", sp, mode), s.workers, s.qps, s.burst, crs(100), 0)
			r.syncPeriod, r.naive, r.idle = sp, naive, s.idle
			knob3.rows = append(knob3.rows, r)
			figure := "—"
			if naive && !set["sync-period"] {
				figure = post(100, []string{"1.15 req/s", "0.32 req/s"}[i])[0]
			}
			knob3.post = append(knob3.post, figure)
		}
	}
	if s.idle <= 0 {
		return []*table{knob1, knob2} // knob 3 measures idle traffic: with --idle=0 there is none to count
	}
	return []*table{knob1, knob2, knob3}
}

// runCompare runs every configuration of the post's three experiments and
// prints them as tables and charts. The runs of the first two tables go
// one after the other, so they never compete for the machine; the idle
// runs of the third go side by side (each has its own client, informers
// and limiter, and selects only its own objects), since idling costs
// nothing and five minutes each would otherwise add up.
func runCompare(ctx context.Context, e env, s settings, set map[string]bool, svg string, out io.Writer) error {
	tables := postTables(s, set)
	if s.idle <= 0 {
		fmt.Fprintln(out, "Knob 3, the sync period, is left out: it counts idle traffic, and --idle=0 leaves no time to count.")
	}
	for _, t := range tables {
		t.results = make([]*result, len(t.rows))
		if t.idle {
			fmt.Fprintf(out, "%s: %d runs side by side...\n", t.title, len(t.rows))
			var wg sync.WaitGroup
			errs := make([]error, len(t.rows))
			for i, row := range t.rows {
				row.progress = false
				wg.Go(func() { t.results[i], errs[i] = runOnce(ctx, e, row, io.Discard) })
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return err
				}
			}
			continue
		}
		for i, row := range t.rows {
			if !s.progress {
				fmt.Fprintf(out, "%s: %s...\n", t.title, row.name)
			}
			r, err := runOnce(ctx, e, row, out)
			if err != nil {
				return err
			}
			t.results[i] = r
		}
	}
	for _, t := range tables {
		printTable(out, t)
	}
	printTerminalCharts(out, tables)
	if err := os.MkdirAll(filepath.Dir(svg), 0o755); err != nil {
		return err
	}
	if err := writeSVG(svg, tables); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nChart written to %s\n", svg)
	return nil
}

func printTable(out io.Writer, t *table) {
	fmt.Fprintf(out, "\n%s\n", t.title)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	if t.idle {
		fmt.Fprintln(w, "  configuration\tidle requests\treq/s\treconciles\tpost\t")
		busy := false
		for i, r := range t.results {
			rate := fmt.Sprintf("%.3f", r.idleRate())
			if r.neverIdle {
				rate, busy = rate+" *", true
			}
			fmt.Fprintf(w, "  %s\t%d\t%s\t%d\t%s\t\n", t.rows[i].name,
				r.idle.total-r.idleFrom.total, rate, r.idleT.reconciles-r.idleFromT.reconciles, t.post[i])
		}
		_ = w.Flush()
		if busy {
			fmt.Fprintln(out, "  * never idle: one resync's work took longer than the sync period, so the queue never emptied;\n"+
				"    the client ran at its QPS limit the whole time.")
		}
		return
	}
	fmt.Fprintln(w, "  configuration\tall reconciled\tcaches synced\tper Cluster\tcalls/Cluster\tthrottled (>50ms)\tfastest possible\treached\tpost\t")
	for i, r := range t.results {
		b := boundOf(r)
		ofBound := "—"
		if best := b.shortest(); best > 10*time.Millisecond {
			ofBound = fmt.Sprintf("%.0f%%", 100*best.Seconds()/(r.t.elapsed-r.t.synced).Seconds())
		}
		done := round(r.t.elapsed).String()
		if r.timedOut {
			done = fmt.Sprintf("timed out (%d/%d)", r.t.converged, r.s.crs)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%.1f\t%d, %s (%d)\t%s\t%s\t%s\t\n", t.rows[i].name, done, round(r.t.synced),
			round(r.t.elapsed/time.Duration(r.s.crs)), b.c, r.load.waits, round(r.load.waited), r.load.waits50,
			round(b.shortest()), ofBound, t.post[i])
	}
	_ = w.Flush()
	fmt.Fprintln(out, strings.TrimRight(explainTable(t), "\n"))
}

// explainTable says, with the measured numbers, why the rows differ.
func explainTable(t *table) string {
	first, last := t.results[0], t.results[len(t.results)-1]
	b := boundOf(first)
	var text string
	if first.s.rtt > 0 {
		text += fmt.Sprintf("  With 1 worker every call waits its round trip: %.1f sequential calls × %s = %s per Cluster at best.\n",
			b.s, first.s.rtt, round(time.Duration(b.s*float64(first.s.rtt))))
		if one := time.Duration(boundOf(last).s * float64(last.s.rtt)); one > 220*time.Millisecond {
			text += fmt.Sprintf("  The post's 0.22s with 50 workers is less than one reconcile's %.1f sequential calls × %s = %s:\n"+
				"  no operator whose reconcile waits for its calls can match it, however many workers it has.\n",
				boundOf(last).s, last.s.rtt, round(one))
		}
	}
	text += "  \"fastest possible\": what the knobs allow (see docs/11); \"reached\": that time over the time taken after the\n" +
		"  caches synced (the clock starts with the operator, so the first LIST, and the TCP and TLS handshakes before it,\n" +
		"  come first: a few round trips).\n"
	text += fmt.Sprintf("  Burst %d lets the first %d calls through at once; after it, %g QPS ÷ %.1f calls = %.1f Clusters/s at most.\n",
		first.s.burst, first.s.burst, first.s.qps, b.c, float64(first.s.qps)/b.c)
	return text
}
