package main

import (
	"fmt"
	"strings"
)

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
		c := caseName(r)
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
	// A line that lists no case still names the benchmarks it checked: a
	// target names its proof, as every guarantee in docs/ must.
	all := " Checked: " + benchmarkList(res) + "."
	out = append(out, fmt.Sprintf("Time ratio ≤ 1.0 on every workload: %s — %d of %d cases more than 5%% slower%s. Within 5%% (noise in one run): %d%s.%s", mark(len(slower) == 0), len(slower), n, list(slower), len(slowerNoise), list(slowerNoise), when(len(slower)+len(slowerNoise) == 0, all)))
	out = append(out, fmt.Sprintf("Allocations ≤ client-go: %s — %d of %d cases allocate more than 5%% more%s. Within 5%%: %d%s.%s", mark(len(moreAllocs) == 0), len(moreAllocs), n, list(moreAllocs), len(moreAllocsNoise), list(moreAllocsNoise), when(len(moreAllocs)+len(moreAllocsNoise) == 0, all)))
	for _, r := range res.cases {
		switch {
		case r.workload == 6:
			x := r.ratio("ns/event/handler", "ours", "chan")
			y := r.ratio("ns/event/handler", "clientgo", "chan")
			out = append(out, fmt.Sprintf("Fan-out %s within 3× of a buffered-channel hand-off per handler (`impl=chan`): %s — ours %.1f×, client-go %.1f×.", caseName(r), mark(x <= 3), x, y))
		case r.workload == 4 && strings.Contains(r.cas, "readers=10"):
			x := r.ratio("writes/s", "ours", "clientgo")
			out = append(out, fmt.Sprintf("Store writes under 10 readers %s ≥ 10× client-go: %s — %.2f×.", caseName(r), mark(x >= 10), x))
		case r.workload == 8 && strings.Contains(r.cas, "transform=none"):
			x := r.ratio("ns/op", "ours", "clientgo")
			y := r.ratio("ns/op", "ours", "baseline")
			out = append(out, fmt.Sprintf("Initial sync %s ≤ client-go and ≤ 1.2× the bare LIST + decode: %s — %.2f× client-go, %.2f× bare.", caseName(r), mark(x <= 1 && y <= 1.2), x, y))
		}
		if r.workload == 8 {
			x := r.ratio("heapB/obj", "ours", "clientgo")
			out = append(out, fmt.Sprintf("Heap per cached object %s ≤ client-go's: %s — %.2f×.", caseName(r), mark(x <= 1.0), x))
		}
	}
	return out
}

// caseName is a case as go test names it, without its impl:
// `BenchmarkQueueCycle/keys=1k/workers=8`, which -bench accepts as is.
func caseName(r *result) string {
	return fmt.Sprintf("`Benchmark%s/%s`", r.bench, r.cas)
}

// when returns s if ok, "" otherwise.
func when(ok bool, s string) string {
	if ok {
		return s
	}
	return ""
}

func list(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, ", ")
}
