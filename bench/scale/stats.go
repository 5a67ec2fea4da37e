package scale

import (
	"fmt"
	"math"
)

// Ratio is ours/client-go over paired runs: the geometric mean of the
// per-pair ratios, with a 95% confidence interval from Student's t on
// their logarithms. Pairs, not two separate samples, because the runs are
// interleaved: a pair shares the machine's state (other load, the page
// cache, the apiserver's warm-up), and the ratio within a pair cancels it.
type Ratio struct {
	Value, Low, High float64
	Pairs            int
}

// PairedRatio computes the Ratio of ours[i]/theirs[i]. Both slices must be
// the same length, at least 1, and hold positive values. One pair gives no
// interval: Low 0 and High +Inf, which is never conclusive.
func PairedRatio(ours, theirs []float64) (Ratio, error) {
	if len(ours) != len(theirs) || len(ours) == 0 {
		return Ratio{}, fmt.Errorf("scale: %d runs of ours but %d of client-go", len(ours), len(theirs))
	}
	logs := make([]float64, len(ours))
	for i := range ours {
		if ours[i] <= 0 || theirs[i] <= 0 {
			return Ratio{}, fmt.Errorf("scale: run %d has a value that is not positive (%g, %g)", i, ours[i], theirs[i])
		}
		logs[i] = math.Log(ours[i] / theirs[i])
	}
	if len(logs) == 1 {
		return Ratio{Value: math.Exp(logs[0]), Low: 0, High: math.Inf(1), Pairs: 1}, nil
	}
	mean, half, err := meanInterval(logs)
	if err != nil {
		return Ratio{}, err
	}
	return Ratio{Value: math.Exp(mean), Low: math.Exp(mean - half), High: math.Exp(mean + half), Pairs: len(logs)}, nil
}

// HalfWidth is the interval's half-width relative to the ratio: 0.1 means
// roughly ±10%.
func (r Ratio) HalfWidth() float64 { return (r.High - r.Low) / 2 / r.Value }

// Conclusive reports whether the interval is narrow enough (half-width at
// most 10%) for the ratio to count for or against a goal.
func (r Ratio) Conclusive() bool { return r.HalfWidth() <= 0.10 }

// Verdict of a ratio against a goal.
type Verdict string

const (
	// Met: the whole interval is on the goal's side of its limit.
	Met Verdict = "met"
	// Missed: the whole interval is on the wrong side.
	Missed Verdict = "missed"
	// Inconclusive: the interval straddles the limit, or is wider than
	// ±10%.
	Inconclusive Verdict = "inconclusive"
	// NotJudged: another process took more than ForeignLoadLimit during
	// a pair of the row, so its figures say nothing about either library.
	NotJudged Verdict = "not judged"
)

// AtMost judges the goal "ratio ≤ limit": met when the whole interval is
// at or below it, missed when the whole interval is above it, and
// inconclusive when it straddles the limit or is wider than ±10%.
func (r Ratio) AtMost(limit float64) Verdict {
	switch {
	case !r.Conclusive():
		return Inconclusive
	case r.High <= limit:
		return Met
	case r.Low > limit:
		return Missed
	}
	return Inconclusive
}

// AtLeast judges the goal "ratio ≥ limit", the mirror of AtMost.
func (r Ratio) AtLeast(limit float64) Verdict {
	switch {
	case !r.Conclusive():
		return Inconclusive
	case r.Low >= limit:
		return Met
	case r.High < limit:
		return Missed
	}
	return Inconclusive
}

// String formats the ratio with its interval: "0.70× [0.68, 0.72]".
func (r Ratio) String() string {
	if math.IsInf(r.High, 1) {
		return fmt.Sprintf("%.2f× [no interval: %d run]", r.Value, r.Pairs)
	}
	return fmt.Sprintf("%.2f× [%.2f, %.2f]", r.Value, r.Low, r.High)
}

// Slope is the exponent b of a power law y = a·N^b fitted by least squares
// on log y against log N, with its 95% confidence interval. b = 1 is
// linear growth; above 1.1 the harness flags the series as worse than
// linear.
type Slope struct {
	Value, Low, High float64
	Points           int
}

// FitSlope fits the power law to the points (n[i], y[i]); it needs at
// least three points over at least two distinct n, all positive.
func FitSlope(n, y []float64) (Slope, error) {
	if len(n) != len(y) || len(n) < 3 {
		return Slope{}, fmt.Errorf("scale: a slope needs at least 3 points, got %d sizes and %d values", len(n), len(y))
	}
	var sx, sy float64
	xs, ys := make([]float64, len(n)), make([]float64, len(n))
	for i := range n {
		if n[i] <= 0 || y[i] <= 0 {
			return Slope{}, fmt.Errorf("scale: point %d (%g, %g) is not positive", i, n[i], y[i])
		}
		xs[i], ys[i] = math.Log(n[i]), math.Log(y[i])
		sx += xs[i]
		sy += ys[i]
	}
	k := float64(len(n))
	mx, my := sx/k, sy/k
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return Slope{}, fmt.Errorf("scale: a slope needs at least two different sizes")
	}
	b := sxy / sxx
	var sse float64
	for i := range xs {
		r := ys[i] - (my + b*(xs[i]-mx))
		sse += r * r
	}
	se := math.Sqrt(sse / (k - 2) / sxx)
	half := tQuantile975(len(n)-2) * se
	return Slope{Value: b, Low: b - half, High: b + half, Points: len(n)}, nil
}

// Steep reports whether the fitted slope is above 1.1: time or memory
// growing faster than the object count.
func (s Slope) Steep() bool { return s.Value > 1.1 }

// String formats the slope with its interval: "1.02 [0.98, 1.06]".
func (s Slope) String() string {
	return fmt.Sprintf("%.2f [%.2f, %.2f]", s.Value, s.Low, s.High)
}

// Summary is the mean of one library's runs with its 95% interval, for a
// figure reported beside a ratio.
type Summary struct {
	Mean, Low, High float64
	Runs            int
}

// Summarize returns the mean of xs and its t interval; one run gives an
// interval of zero width.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	if len(xs) == 1 {
		return Summary{Mean: xs[0], Low: xs[0], High: xs[0], Runs: 1}
	}
	mean, half, _ := meanInterval(xs)
	return Summary{Mean: mean, Low: mean - half, High: mean + half, Runs: len(xs)}
}

// meanInterval returns the mean of xs and the half-width of its 95% t
// interval.
func meanInterval(xs []float64) (mean, half float64, err error) {
	if len(xs) < 2 {
		return 0, 0, fmt.Errorf("scale: an interval needs at least 2 runs, got %d", len(xs))
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return mean, tQuantile975(len(xs)-1) * sd / math.Sqrt(float64(len(xs))), nil
}

// tQuantile975 is the 97.5th percentile of Student's t distribution with
// df degrees of freedom (two-sided 95%), from the standard table.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
		2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093,
		2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return math.Inf(1)
	case df < len(table):
		return table[df]
	case df < 60:
		return 2.021 // df 40, a slight over-estimate up to 59
	case df < 120:
		return 2.000
	}
	return 1.960
}

func sqrt(x float64) float64 { return math.Sqrt(x) }
