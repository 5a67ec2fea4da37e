package scale

import "fmt"

// Goal is one target of the scale ladder (the Goals table of
// docs/17-at-scale/results.md), judged on one row's ratio.
type Goal struct {
	Text    string // what is asked, as the chapter states it
	Ratio   Ratio
	Verdict Verdict
	Note    string // which row, or why it could not be judged
}

// NotWorse judges "no slower than client-go" (or, for a rate, no lower):
// met when the interval reaches the tie, missed when it lies wholly on the
// wrong side.
func (r Ratio) NotWorse(higherIsBetter bool) Verdict {
	if !r.Conclusive() {
		return Inconclusive
	}
	if higherIsBetter && r.High >= 1 || !higherIsBetter && r.Low <= 1 {
		return Met
	}
	return Missed
}

// Goals judges every goal the ladder can measure, at its largest size.
func (res *Results) Goals() []Goal {
	top := res.Config.Sizes[len(res.Config.Sizes)-1]
	var goals []Goal
	ratioGoal := func(text, workload, shape string, n int, variant string, judge func(Ratio) Verdict) {
		row, ok := res.Find(workload, shape, n, variant)
		if !ok {
			goals = append(goals, Goal{Text: text, Verdict: Inconclusive, Note: "not measured in this run"})
			return
		}
		r, err := row.Ratio()
		if err != nil {
			goals = append(goals, Goal{Text: text, Verdict: Inconclusive, Note: err.Error()})
			return
		}
		note := fmt.Sprintf("%s, %s %s, %s", workload, Count(n), shape, variant)
		if load := row.ForeignLoad(); load > ForeignLoadLimit {
			goals = append(goals, Goal{Text: text, Ratio: r, Verdict: NotJudged, Note: fmt.Sprintf("%s; other processes took %.2f cores during a pair", note, load)})
			return
		}
		goals = append(goals, Goal{Text: text, Ratio: r, Verdict: judge(r), Note: note})
	}
	atMost := func(limit float64) func(Ratio) Verdict { return func(r Ratio) Verdict { return r.AtMost(limit) } }
	atLeast := func(limit float64) func(Ratio) Verdict { return func(r Ratio) Verdict { return r.AtLeast(limit) } }

	ratioGoal(fmt.Sprintf("initial sync at %s, each library's defaults: ≤ 0.8×", Count(top)), InitialSync, ConfigMaps, top, string(Defaults), atMost(0.8))
	ratioGoal(fmt.Sprintf("initial sync at %s, same encoding and list semantics: ≤ 0.8×", Count(top)), InitialSync, ConfigMaps, top, string(StreamJSON), atMost(0.8))
	ratioGoal("live heap per object, lossless (ConfigMap): ≤ 1.0×", HeapPerObject, ConfigMaps, top, string(Defaults), atMost(1.0))
	ratioGoal("live heap per object, lossless (Pod): ≤ 1.0×", HeapPerObject, Pods, top, string(Defaults), atMost(1.0))
	strippedGoal := func(text, shape string, limit float64) {
		ours, okO := res.Find(HeapPerObject, shape, top, string(Stripped))
		theirs, okT := res.Find(HeapPerObject, shape, top, string(Defaults))
		if !okO || !okT {
			goals = append(goals, Goal{Text: text, Verdict: Inconclusive, Note: "not measured in this run"})
			return
		}
		// Ours stripped against client-go as it ships (the pairs are of
		// different rows, run at different times: a ratio of means).
		r, err := unpairedRatio(ours.Ours, theirs.ClientGo)
		if err != nil {
			goals = append(goals, Goal{Text: text, Verdict: Inconclusive, Note: err.Error()})
			return
		}
		goals = append(goals, Goal{Text: text, Ratio: r, Verdict: r.AtMost(limit), Note: "ours stripped / client-go defaults; both stripped: see the heap table"})
	}
	strippedGoal("live heap per object, managedFields stripped (ConfigMap): ≤ 0.85×", ConfigMaps, 0.85)
	strippedGoal("live heap per object, managedFields stripped (Pod): ≤ 0.7×", Pods, 0.7)
	for _, n := range res.Config.StoreSizes {
		if n < 10_000 {
			continue
		}
		ratioGoal(fmt.Sprintf("store writes under 10 readers at %s: ≥ 10×", Count(n)), StoreWrites, ConfigMaps, n, "readers=10", atLeast(10))
		ratioGoal(fmt.Sprintf("store reads under 10 readers at %s: ≥ 1.0×", Count(n)), StoreReads, ConfigMaps, n, "readers=10", atLeast(1))
		ratioGoal(fmt.Sprintf("store writes, no readers, at %s: no slower", Count(n)), StoreWrites, ConfigMaps, n, "readers=0", func(r Ratio) Verdict { return r.NotWorse(true) })
	}
	ratioGoal(fmt.Sprintf("relist at %s: time ≤ client-go's", Count(top)), Relist, ConfigMaps, top, "defaults", atMost(1.0))
	for _, p := range res.Relists {
		if p.N != top {
			continue
		}
		s := Summarize(p.Ours)
		g := Goal{Text: fmt.Sprintf("relist at %s: our peak live heap ≤ %.1f× steady", Count(top), relistPeakGoal),
			Ratio: Ratio{Value: s.Mean, Low: s.Low, High: s.High, Pairs: s.Runs}, Note: "ours alone: peak/steady, not a ratio to client-go"}
		switch {
		case s.Runs < 2:
			g.Verdict = Inconclusive
		case s.High <= relistPeakGoal:
			g.Verdict = Met
		case s.Low > relistPeakGoal:
			g.Verdict = Missed
		default:
			g.Verdict = Inconclusive
		}
		goals = append(goals, g)
	}
	return goals
}

// unpairedRatio is the ratio of the means of two independent samples,
// with a 95% interval from the delta method on the logarithm.
func unpairedRatio(a, b []float64) (Ratio, error) {
	if len(a) < 2 || len(b) < 2 {
		return Ratio{}, fmt.Errorf("scale: an interval needs at least 2 runs of each, got %d and %d", len(a), len(b))
	}
	sa, sb := Summarize(a), Summarize(b)
	v := sa.Mean / sb.Mean
	// Relative half-widths add in quadrature for a quotient.
	ra := (sa.High - sa.Mean) / sa.Mean
	rb := (sb.High - sb.Mean) / sb.Mean
	rel := sqrt(ra*ra + rb*rb)
	return Ratio{Value: v, Low: v * (1 - rel), High: v * (1 + rel), Pairs: min(len(a), len(b))}, nil
}

// relistPeakGoal is the most a relist may raise our live heap over the
// steady heap: 1.3×, with the list applied in parts (chapter 17, lesson
// 6). It was 1.5× while a relist was applied whole.
const relistPeakGoal = 1.3
