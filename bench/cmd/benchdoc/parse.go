package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

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
	"FIFOSlowConsumer": 7, "InitialSync": 8, "ReconcileThroughput": 9,
	"WatchLatency": 10,
}

var workloadNames = map[int]string{
	1: "queue add/get/done cycle", 2: "contended add", 3: "rate-limited churn / add-after",
	4: "store updates under readers", 5: "lister selector", 6: "handler fan-out",
	7: "FIFO, slow consumer", 8: "initial sync, pre-encoded Pods",
	9: "reconcile throughput under RTT", 10: "watch event-to-handler latency",
}

// parse reads benchmark lines ("Benchmark<Name>/a=b/impl=ours-2  N  v unit ...")
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
