package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/listwatch/informer/bench/scale"
)

// report prints each variant's medians, and its ratio to the last
// variant's: the geometric mean of the per-pair ratios with a 95%
// interval, as the scale ladder computes it (scale.PairedRatio).
func report(w io.Writer, names []string, samples map[string][]sample, relists bool) {
	base := names[len(names)-1]
	busy := map[string]bool{}
	for _, name := range names {
		for i, s := range samples[name] {
			if s.Others > scale.ForeignLoadLimit {
				busy[name] = true
				fmt.Fprintf(w, "\nnot judged: in pair %d, while %s ran, other processes took %.2f cores (limit %.1f)\n", i+1, name, s.Others, scale.ForeignLoadLimit)
			}
		}
	}
	fmt.Fprintf(w, "\n| measure (median of %d; ratio to %s, 95%% interval) | %s |\n|---|%s\n", len(samples[base]), base, strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	type measure struct {
		name string
		of   func(sample) float64
	}
	measures := []measure{
		{"time to synced (s)", func(s sample) float64 { return s.Seconds }},
		{"informer process CPU (s)", func(s sample) float64 { return s.CPU }},
		{"apiserver CPU (s)", func(s sample) float64 { return s.ServerCPU }},
		{"live heap per cached object (B)", func(s sample) float64 { return s.HeapPerObject }},
		{"peak live heap during the sync / steady", func(s sample) float64 { return s.PeakOverSteady }},
	}
	if relists {
		measures = []measure{
			{"relist time (s)", func(s sample) float64 { return s.RelistSeconds }},
			{"informer process CPU per relist (s)", func(s sample) float64 { return s.RelistCPU }},
			{"peak live heap during the relist / steady", func(s sample) float64 { return s.RelistPeak }},
		}
	}
	for _, m := range measures {
		cells := []string{}
		for _, name := range names {
			cell := fmt.Sprintf("%.2f", median(samples[name], m.of))
			if name != base {
				r, err := scale.PairedRatio(values(samples[name], m.of), values(samples[base], m.of))
				switch {
				case busy[name] || busy[base]: // a ratio is of two samples
					cell += " (not judged: foreign load)"
				case err == nil:
					cell += fmt.Sprintf(" (%.2f× [%.2f, %.2f])", r.Value, r.Low, r.High)
				}
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(w, "| %s | %s |\n", m.name, strings.Join(cells, " | "))
	}
	for _, name := range names {
		switch s := samples[name][0]; {
		case !relists:
			fmt.Fprintf(w, "\n%s: %s → %s\n", name, s.Request, s.Answer)
		case s.Request != "":
			fmt.Fprintf(w, "\n%s, its first list: %s → %s\n", name, s.Request, s.Answer)
		}
	}
}

func median(samples []sample, of func(sample) float64) float64 {
	sorted := values(samples, of)
	slices.Sort(sorted)
	if len(sorted)%2 == 1 {
		return sorted[len(sorted)/2]
	}
	return (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
}

// values is of applied to each sample, in pair order.
func values(samples []sample, of func(sample) float64) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = of(s)
	}
	return out
}

// loadAverage is the one-minute load average: what else ran.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return v
}
