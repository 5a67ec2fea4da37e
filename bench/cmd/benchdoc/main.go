// Command benchdoc turns the output of `go test -bench ./bench/` into
// docs/12-benchmarks.md: the ours/client-go ratio table, which targets were
// met, the machine and versions, and SVG charts drawn from the same
// numbers. Nothing in the page is typed by hand except bench/NOTES.md,
// which it includes under a heading of its own.
//
//	go run ./bench/cmd/benchdoc -in bin/bench.txt -benchstat bin/benchstat.txt -out docs/12-benchmarks.md
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	in := flag.String("in", "bin/bench.txt", "raw `go test -bench` output")
	stat := flag.String("benchstat", "", "benchstat output to include (optional)")
	notes := flag.String("notes", "bench/NOTES.md", "hand-written notes to include (optional)")
	out := flag.String("out", "docs/12-benchmarks.md", "the page to write; charts go in a directory beside it")
	flag.Parse()

	res, err := parse(*in)
	if err != nil {
		log.Fatal(err)
	}
	chartDir := strings.TrimSuffix(*out, ".md")
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		log.Fatal(err)
	}
	charts, err := drawCharts(res, chartDir)
	if err != nil {
		log.Fatal(err)
	}
	var statText, notesText string
	if *stat != "" {
		b, err := os.ReadFile(*stat)
		if err != nil {
			log.Fatal(err)
		}
		statText = string(b)
	}
	if b, err := os.ReadFile(*notes); err == nil {
		notesText = string(b)
	}
	rel := make([]string, len(charts))
	for i, c := range charts {
		rel[i], _ = filepath.Rel(filepath.Dir(*out), c)
	}
	page := render(res, rel, statText, notesText)
	if err := os.WriteFile(*out, []byte(page), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", *out, "and", len(charts), "charts in", chartDir)
}

// result is one benchmark case across implementations.
type result struct {
	workload int
	bench    string                        // BenchmarkQueueCycle
	cas      string                        // keys=1k/workers=8
	impls    map[string]map[string]float64 // impl → unit → median value
}

type results struct {
	config map[string]string
	cases  []*result
}

var workloads = map[string]int{
	"QueueCycle": 1, "QueueContendedAdd": 2, "QueueRateLimited": 3,
	"StoreUpdateUnderReaders": 4, "ListerSelector": 5, "Fanout": 6,
	"FIFOSlowConsumer": 7, "InitialSync": 8, "RelistStorm": 9,
	"APIServerInitialSync": 10, "ReconcileThroughput": 11, "WatchLatency": 12,
}

var workloadNames = map[int]string{
	1: "queue add/get/done cycle", 2: "contended add", 3: "rate-limited churn / add-after",
	4: "store updates under readers", 5: "lister selector", 6: "handler fan-out",
	7: "FIFO, slow consumer", 8: "initial sync, pre-encoded Pods", 9: "relist storm",
	10: "initial sync, real apiserver", 11: "reconcile throughput under RTT",
	12: "watch event-to-handler latency",
}

// parse reads benchmark lines ("BenchmarkX/a=b/impl=ours-2  N  v unit ...")
// and configuration lines ("key: value").
func parse(path string) (*results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	res := &results{config: map[string]string{}}
	byName := map[string]*result{}
	samples := map[string]map[string]map[string][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.Contains(k, " ") && !strings.HasPrefix(k, "Benchmark") {
			res.config[k] = strings.TrimSpace(v)
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := fields[0]
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		i := strings.LastIndex(name, "/impl=")
		if i < 0 {
			continue
		}
		key, impl := name[:i], name[i+len("/impl="):]
		top, cas, _ := strings.Cut(strings.TrimPrefix(key, "Benchmark"), "/")
		r := byName[key]
		if r == nil {
			r = &result{workload: workloads[top], bench: top, cas: cas, impls: map[string]map[string]float64{}}
			byName[key] = r
			res.cases = append(res.cases, r)
			samples[key] = map[string]map[string][]float64{}
		}
		if samples[key][impl] == nil {
			samples[key][impl] = map[string][]float64{}
		}
		for j := 2; j+1 < len(fields); j += 2 {
			v, err := strconv.ParseFloat(fields[j], 64)
			if err != nil {
				continue
			}
			samples[key][impl][fields[j+1]] = append(samples[key][impl][fields[j+1]], v)
		}
	}
	for key, byImpl := range samples {
		for impl, units := range byImpl {
			byName[key].impls[impl] = map[string]float64{}
			for unit, vs := range units {
				byName[key].impls[impl][unit] = median(vs)
			}
		}
	}
	sort.SliceStable(res.cases, func(i, j int) bool { return res.cases[i].workload < res.cases[j].workload })
	return res, sc.Err()
}

func median(vs []float64) float64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// ratio returns ours/clientgo for unit, or NaN when either is missing.
func (r *result) ratio(unit, a, b string) float64 {
	x, ok1 := r.impls[a][unit]
	y, ok2 := r.impls[b][unit]
	if !ok1 || !ok2 {
		return math.NaN()
	}
	if y == 0 {
		if x == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return x / y
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if math.IsInf(v, 1) {
		return "∞"
	}
	s := fmt.Sprintf("%.2f", v)
	if v > 1.005 {
		s = "**" + s + "**"
	}
	return s
}

func fmtNum(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.2fs", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fms", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fµs", v/1e3)
	}
	return fmt.Sprintf("%.0fns", v)
}

func value(r *result, impl, unit string) (float64, bool) {
	v, ok := r.impls[impl][unit]
	return v, ok
}

func render(res *results, charts []string, statText, notes string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# 12. Benchmarks: this library next to client-go\n\n")
	w("<!-- Generated by `make bench` (bench/cmd/benchdoc) from one `go test -bench` run. Do not edit by hand; edit bench/NOTES.md. -->\n\n")
	w("Is the hand-built version a toy? Every workload below runs through this module and through client-go v0.37.2's `tools/cache` and `util/workqueue`, side by side in one `go test -bench -benchmem` run of package `bench/`. A ratio is ours ÷ client-go: below 1 is faster (or fewer allocations), **bold** is a miss. The figures come from one run on a shared machine, so they are noisy; rerun `make bench` (and `BENCH_FULL=1 make bench` for the large sizes) to get your own.\n\n")

	w("## Machine and versions\n\n")
	w("| | |\n|---|---|\n")
	w("| CPU | %s |\n", cpuModel())
	w("| cores (`nproc`) | %d |\n", runtime.NumCPU())
	w("| OS/arch | %s/%s |\n", runtime.GOOS, runtime.GOARCH)
	w("| Go | %s |\n", runtime.Version())
	w("| client-go | %s |\n", moduleVersion("k8s.io/client-go"))
	w("| sizes | %s |\n", map[bool]string{true: "full (`BENCH_FULL=1`)", false: "short (default)"}[res.config["bench-full"] == "true"])
	w("| generated | %s |\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	w("client-go feature gates, pinned through `KUBE_FEATURE_<Name>` in the bench package's TestMain (and the Makefile), as they were in effect during the run:\n\n")
	var gates []string
	for k, v := range res.config {
		if name, ok := strings.CutPrefix(k, "clientgo-gate-"); ok {
			gates = append(gates, fmt.Sprintf("`%s=%s`", name, v))
		}
	}
	sort.Strings(gates)
	w("%s.\n\n", strings.Join(gates, ", "))
	w("What is compared: our `workqueue.Queue` with client-go's `workqueue.Typed` (and its rate-limiting queue with `DefaultTypedControllerRateLimiter`); our `indexer` and `lister` with `cache.NewIndexer` and `cache.ListAll`/`ListAllByNamespace`; our `deltafifo.DeltaFIFO` with client-go's `cache.DeltaFIFO` built directly; our `sharedinformer.Informer` with client-go's `cache.NewSharedIndexInformer` as it ships (in v0.37.2 that always means the in-order RealFIFO, with batch processing). Workloads 6–9 feed both informers from the same in-process source (pre-encoded LIST bytes decoded on every LIST; watch events from a channel); there client-go's ListerWatcher declares it cannot stream lists, so both LIST. Workloads 10–12 run against a real etcd + kube-apiserver on this machine.\n\n")

	w("## Ratios\n\n")
	w("| # | workload | case | ours time/op | client-go time/op | time ratio | allocs ratio | other metrics (ours / client-go) |\n")
	w("|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.cases {
		if _, ok := r.impls["clientgo"]; !ok {
			continue
		}
		ot, ok1 := value(r, "ours", "ns/op")
		ct, ok2 := value(r, "clientgo", "ns/op")
		var extra []string
		var units []string
		for u := range r.impls["ours"] {
			if u != "ns/op" && u != "B/op" && u != "allocs/op" {
				if _, ok := r.impls["clientgo"][u]; ok {
					units = append(units, u)
				}
			}
		}
		sort.Strings(units)
		for _, u := range units {
			extra = append(extra, fmt.Sprintf("%s %s / %s", u, short(r.impls["ours"][u]), short(r.impls["clientgo"][u])))
		}
		for _, floor := range []string{"chan", "baseline"} {
			if v, ok := value(r, floor, "ns/op"); ok {
				extra = append(extra, fmt.Sprintf("%s time %s", floor, fmtNum(v, true)))
			}
		}
		w("| %d | %s | `%s` | %s | %s | %s | %s | %s |\n", r.workload, workloadNames[r.workload], r.cas,
			fmtNum(ot, ok1), fmtNum(ct, ok2), fmtRatio(r.ratio("ns/op", "ours", "clientgo")),
			fmtRatio(r.ratio("allocs/op", "ours", "clientgo")), strings.Join(extra, "; "))
	}
	w("\n")
	for _, c := range charts {
		w("![%s](%s)\n\n", strings.TrimSuffix(filepath.Base(c), ".svg"), c)
	}

	w("## Targets\n\n")
	w("The targets this project set itself, checked against the table above by the generator (reported, not asserted in tests):\n\n")
	for _, t := range targets(res) {
		w("- %s\n", t)
	}
	w("\n")
	if notes != "" {
		w("## Notes (hand-written, bench/NOTES.md)\n\n")
		w("%s\n\n", strings.TrimSpace(notes))
	}
	if statText != "" {
		w("## benchstat\n\n`benchstat -col /impl` over the same run, ours against client-go (one sample per case, so no confidence intervals):\n\n")
		w("```text\n%s\n```\n", strings.TrimSpace(statText))
	}
	return b.String()
}

func short(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case math.Abs(v) >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// targets evaluates each of the project's targets against the results.
func targets(res *results) []string {
	var out []string
	mark := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**missed**"
	}
	// A ratio in (1.0, 1.05] is a miss on paper, but one run on a shared
	// machine cannot tell it from 1.0; it is listed apart.
	const noise = 1.05
	var slower, slowerNoise, moreAllocs, moreAllocsNoise []string
	n := 0
	for _, r := range res.cases {
		if _, ok := r.impls["clientgo"]; !ok {
			continue
		}
		n++
		c := fmt.Sprintf("%d `%s`", r.workload, r.cas)
		if t := r.ratio("ns/op", "ours", "clientgo"); t > noise {
			slower = append(slower, fmt.Sprintf("%s (%.2f)", c, t))
		} else if t > 1.0 {
			slowerNoise = append(slowerNoise, fmt.Sprintf("%s (%.2f)", c, t))
		}
		if a := r.ratio("allocs/op", "ours", "clientgo"); a > noise {
			moreAllocs = append(moreAllocs, fmt.Sprintf("%s (%.2f)", c, a))
		} else if a > 1.0 {
			moreAllocsNoise = append(moreAllocsNoise, fmt.Sprintf("%s (%.2f)", c, a))
		}
	}
	out = append(out, fmt.Sprintf("Time ratio ≤ 1.0 on every workload: %s — %d of %d cases more than 5%% slower%s. Within 5%% (noise in one run): %d%s.", mark(len(slower) == 0), len(slower), n, list(slower), len(slowerNoise), list(slowerNoise)))
	out = append(out, fmt.Sprintf("Allocations ≤ client-go: %s — %d of %d cases allocate more than 5%% more%s. Within 5%%: %d%s.", mark(len(moreAllocs) == 0), len(moreAllocs), n, list(moreAllocs), len(moreAllocsNoise), list(moreAllocsNoise)))
	for _, r := range res.cases {
		switch {
		case r.workload == 6:
			x := r.ratio("ns/event/handler", "ours", "chan")
			y := r.ratio("ns/event/handler", "clientgo", "chan")
			out = append(out, fmt.Sprintf("Fan-out `%s` within 3× of a buffered-channel hand-off per handler: %s — ours %.1f×, client-go %.1f×.", r.cas, mark(x <= 3), x, y))
		case r.workload == 4 && strings.Contains(r.cas, "readers=10"):
			x := r.ratio("writes/s", "ours", "clientgo")
			out = append(out, fmt.Sprintf("Store writes under 10 readers `%s` ≥ 10× client-go: %s — %.2f×.", r.cas, mark(x >= 10), x))
		case r.workload == 8 && strings.Contains(r.cas, "transform=none"), r.workload == 10 && !strings.Contains(r.cas, "mode=stream"):
			x := r.ratio("ns/op", "ours", "clientgo")
			y := r.ratio("ns/op", "ours", "baseline")
			if r.workload == 10 && math.IsNaN(y) {
				// The bare LIST is measured once per encoding, under mode=list.
				y = r.impls["ours"]["ns/op"] / baselineOf(res, strings.Replace(r.cas, "mode=list-rv0", "mode=list", 1))
			}
			out = append(out, fmt.Sprintf("Initial sync `%s` (workload %d) ≤ client-go and ≤ 1.2× the bare LIST + decode: %s — %.2f× client-go, %.2f× bare.", r.cas, r.workload, mark(x <= 1 && y <= 1.2), x, y))
		}
		if r.workload == 8 {
			x := r.ratio("heapB/obj", "ours", "clientgo")
			out = append(out, fmt.Sprintf("Heap per cached object `%s` ≤ client-go's: %s — %.2f×.", r.cas, mark(x <= 1.0), x))
		}
	}
	return out
}

// baselineOf returns the bare LIST time of case cas in workload 10.
func baselineOf(res *results, cas string) float64 {
	for _, r := range res.cases {
		if r.workload == 10 && r.cas == cas {
			if v, ok := r.impls["baseline"]["ns/op"]; ok {
				return v
			}
		}
	}
	return math.NaN()
}

func list(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, ", ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// moduleVersion reads a requirement's version from go.mod.
func moduleVersion(path string) string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	return "unknown"
}
