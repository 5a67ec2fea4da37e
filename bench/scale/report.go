package scale

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Markdown renders the results as the generated part of the results page: the
// goals, then one table per workload, then the growth with N.
func (res *Results) Markdown(charts []string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	cfg := res.Config
	w("Pairs per row: %d (relists: %d, in-process at 1M: %d); sizes %s served by the control plane, up to %s in-process. ",
		cfg.Count, cfg.RelistCount, cfg.InProcessCount, joinCounts(cfg.Sizes), joinCounts(cfg.InProcessSizes))
	w("Each ratio is ours/client-go: the geometric mean of the pairs with its 95%% interval; ")
	w("a row whose interval is wider than ±10%% is marked *inconclusive* and counts for no goal. ")
	w("During each served pair the ladder also measures what processes other than itself, etcd and the apiserver took (the machine's user CPU time from /proc/stat less theirs); ")
	w("a goal whose row had a pair above %.1f core is *not judged*. The most any pair saw in this run: %.2f cores.\n\n", ForeignLoadLimit, res.foreignLoad())

	w("#### Goals\n\n| goal | ours/client-go [95%% CI] | verdict | measured on |\n|---|---|---|---|\n")
	for _, g := range res.Goals() {
		ratio := "—"
		if g.Ratio.Pairs > 0 {
			ratio = g.Ratio.String()
		}
		w("| %s | %s | **%s** | %s |\n", g.Text, ratio, g.Verdict, g.Note)
	}
	for _, t := range []struct{ workload, title string }{
		{InitialSync, "Initial sync (control plane)"},
		{HeapPerObject, "Live heap per cached object"},
		{InformerCPU, "Informer process CPU per sync"},
		{ServerCPU, "Apiserver CPU per sync"},
		{ServerRSS, "Apiserver peak RSS per sync"},
		{Relist, "Relist (from the 410 to every object handled again)"},
		{StoreWrites, "Store writes under readers (in-process)"},
		{StoreReads, "Store reads under readers (in-process)"},
		{InProcessSync, "Initial sync, in-process (own process per run)"},
		{InProcessSync + ", heap", "Live heap per object, in-process"},
	} {
		rows := res.rowsOf(t.workload)
		if len(rows) == 0 {
			continue
		}
		w("\n#### %s\n\n| objects | shape | built as | ours | client-go | ours/client-go [95%% CI] |\n|---|---|---|---|---|---|\n", t.title)
		for _, r := range rows {
			ratio, err := r.Ratio()
			cell := ""
			switch {
			case err != nil && r.Unit == "CPU-s" && slices.Contains(append(r.Ours, r.ClientGo...), 0):
				cell = "below /proc's 10 ms resolution"
			case err != nil:
				cell = err.Error()
			default:
				cell = ratio.String()
				if !ratio.Conclusive() {
					cell += " *inconclusive*"
				}
			}
			w("| %s | %s | %s | %s | %s | %s |\n", Count(r.N), r.Shape, r.Variant, formatSummary(Summarize(r.Ours), r.Unit), formatSummary(Summarize(r.ClientGo), r.Unit), cell)
		}
	}
	if len(res.Requests) > 0 {
		w("\n#### The request that carried each initial list\n\nAs each library's sync process sent it (every size; a request that differed between samples would have a line of its own: `TestARequestThatDifferedBetweenSamplesGetsALineOfItsOwn`), and the apiserver's Content-Type and encoding.\n\n| shape | built as | library | request | answer |\n|---|---|---|---|---|\n")
		for _, r := range res.Requests {
			w("| %s | %s | %s | `%s` | %s |\n", r.Shape, r.Variant, r.Library, r.Request, r.Answer)
		}
	}
	if len(res.Floors) > 0 {
		w("\n#### Raw-bytes floor: one unpaged LIST in the cheapest encoding of its shape, read and not decoded\n\n| objects | shape | encoding | time |\n|---|---|---|---|\n")
		for _, f := range res.Floors {
			w("| %s | %s | %s | %s |\n", Count(f.N), f.Shape, f.Encoding, formatSummary(Summarize(f.Seconds), "s"))
		}
	}
	if len(res.Relists) > 0 {
		w("\n#### Peak live heap during a relist, over the live heap before it\n\n| objects | ours | client-go |\n|---|---|---|\n")
		for _, p := range res.Relists {
			w("| %s | %s | %s |\n", Count(p.N), formatSummary(Summarize(p.Ours), "×"), formatSummary(Summarize(p.ClientGo), "×"))
		}
	}
	if c := res.Bounded; c != nil {
		parts := make([]string, len(c.Growth))
		for i, g := range c.Growth {
			parts[i] = fmt.Sprintf("%.2f", g)
		}
		w("\n#### Memory over %d relists in a row at %s (ours)\n\nLive heap after each relist over the live heap after the first sync: %s.\n", len(c.Growth), Count(c.N), strings.Join(parts, ", "))
	}
	w("\n#### Growth with N\n\nThe exponent b of time or total heap ∝ N^b, fitted on every run (log-log least squares, 95%% interval: `TestFitSlopeRecoversAPowerLaw`); above 1.1 is flagged (`TestASlopeAbove1Point1IsFlaggedInItsCell`).\n\n| series | ours | client-go |\n|---|---|---|\n")
	for _, s := range res.slopeSeries() {
		w("| %s | %s | %s |\n", s.title, slopeCell(s.ours), slopeCell(s.clientGo))
	}
	for _, c := range charts {
		w("\n![%s](%s)\n", strings.TrimSuffix(c[strings.LastIndex(c, "/")+1:], ".svg"), c)
	}
	return b.String()
}

func (res *Results) rowsOf(workload string) []Row {
	var out []Row
	for _, r := range res.Rows {
		if r.Workload == workload {
			out = append(out, r)
		}
	}
	return out
}

func formatSummary(s Summary, unit string) string {
	if s.Runs == 0 {
		return "—"
	}
	value := func(v float64) string {
		switch unit {
		case "s":
			if v < 1 {
				return fmt.Sprintf("%.1f ms", v*1000)
			}
			return fmt.Sprintf("%.2f s", v)
		case "writes/s", "reads/s":
			return fmt.Sprintf("%.3g", v)
		case "B/object":
			return fmt.Sprintf("%.0f B", v)
		case "×":
			return fmt.Sprintf("%.2f×", v)
		}
		return fmt.Sprintf("%.3g %s", v, unit)
	}
	if s.Runs < 2 {
		return value(s.Mean)
	}
	return fmt.Sprintf("%s ± %.0f%%", value(s.Mean), 100*(s.High-s.Mean)/math.Abs(s.Mean))
}

// slopeSet is one fitted growth series for both libraries.
type slopeSet struct {
	title, file, unit string
	n                 []float64 // the sizes, for the chart
	oursMeans, cgMean []float64 // the means at each size, for the chart
	ours, clientGo    *Slope    // nil: not enough sizes
}

func slopeCell(s *Slope) string {
	if s == nil {
		return "—"
	}
	cell := s.String()
	if s.Steep() {
		cell += " **above 1.1**"
	}
	return cell
}

// slopeSeries fits time and total heap against N for the initial sync
// (defaults, ConfigMaps) on the control plane and in-process.
func (res *Results) slopeSeries() []slopeSet {
	var out []slopeSet
	add := func(title, file, unit, workload, variant string, total bool) {
		var rows []Row
		for _, r := range res.Rows {
			if r.Workload == workload && r.Shape == ConfigMaps && r.Variant == variant {
				rows = append(rows, r)
			}
		}
		slices.SortFunc(rows, func(a, b Row) int { return a.N - b.N })
		set := slopeSet{title: title, file: file, unit: unit}
		var xs, yo, yc []float64
		for _, r := range rows {
			scale := 1.0
			if total {
				scale = float64(r.N)
			}
			set.n = append(set.n, float64(r.N))
			set.oursMeans = append(set.oursMeans, Summarize(r.Ours).Mean*scale)
			set.cgMean = append(set.cgMean, Summarize(r.ClientGo).Mean*scale)
			for i := range r.Ours {
				xs = append(xs, float64(r.N))
				yo = append(yo, r.Ours[i]*scale)
				yc = append(yc, r.ClientGo[i]*scale)
			}
		}
		if s, err := FitSlope(xs, yo); err == nil {
			set.ours = &s
		}
		if s, err := FitSlope(xs, yc); err == nil {
			set.clientGo = &s
		}
		if len(rows) > 0 {
			out = append(out, set)
		}
	}
	add("initial sync time, control plane", "sync-time.svg", "seconds", InitialSync, string(Defaults), false)
	add("heap after sync (total), control plane", "sync-heap.svg", "bytes", HeapPerObject, string(Defaults), true)
	add("initial sync time, in-process", "inprocess-time.svg", "seconds", InProcessSync, "paged protobuf", false)
	add("heap after sync (total), in-process", "inprocess-heap.svg", "bytes", InProcessSync+", heap", "paged protobuf", true)
	return out
}

// Charts returns each growth series as an SVG, by file name.
func (res *Results) Charts() map[string]string {
	out := map[string]string{}
	for _, s := range res.slopeSeries() {
		if len(s.n) < 2 {
			continue
		}
		slopes := []string{"", ""}
		if s.ours != nil {
			slopes[0] = fmt.Sprintf("%.2f", s.ours.Value)
		}
		if s.clientGo != nil {
			slopes[1] = fmt.Sprintf("%.2f", s.clientGo.Value)
		}
		out[s.file] = logLogChart(s.title, s.unit, []series{
			{name: Ours, color: "#1f77b4", n: s.n, y: s.oursMeans},
			{name: ClientGo, color: "#ff7f0e", n: s.n, y: s.cgMean},
		}, slopes)
	}
	return out
}

// foreignLoad is the most CPU other processes took during any served
// pair of the run, in cores.
func (res *Results) foreignLoad() float64 {
	most := 0.0
	for _, r := range res.Rows {
		most = max(most, r.ForeignLoad())
	}
	return most
}
