package scale

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPairedRatioIsTheGeometricMeanWithATInterval(t *testing.T) {
	r, err := PairedRatio([]float64{2, 2, 2}, []float64{1, 1, 1})
	require.NoError(t, err)
	assert.InDelta(t, 2, r.Value, 1e-12)
	assert.InDelta(t, 2, r.Low, 1e-12, "identical pairs leave no doubt")
	assert.Equal(t, Met, r.AtLeast(1.9))

	// ratios 1 and 4: geometric mean 2; log sd = ln 4/√2; t(1) = 12.706.
	r, err = PairedRatio([]float64{1, 4}, []float64{1, 1})
	require.NoError(t, err)
	assert.InDelta(t, 2, r.Value, 1e-12)
	half := 12.706 * (math.Log(4) / math.Sqrt2) / math.Sqrt2
	assert.InDelta(t, 2*math.Exp(half), r.High, 1e-9)
	assert.False(t, r.Conclusive())
	assert.Equal(t, Inconclusive, r.AtMost(100), "too wide to count, even below the limit")
}

func TestOnePairGivesARatioButNoVerdict(t *testing.T) {
	r, err := PairedRatio([]float64{3}, []float64{6})
	require.NoError(t, err)
	assert.InDelta(t, 0.5, r.Value, 1e-12)
	assert.Equal(t, Inconclusive, r.AtMost(0.8))
	assert.Contains(t, r.String(), "no interval")
}

func TestPairedRatioRefusesMismatchedOrNonPositiveRuns(t *testing.T) {
	_, err := PairedRatio([]float64{1, 2}, []float64{1})
	assert.ErrorContains(t, err, "2 runs of ours but 1 of client-go")
	_, err = PairedRatio([]float64{1, 0}, []float64{1, 1})
	assert.ErrorContains(t, err, "not positive")
	_, err = PairedRatio(nil, nil)
	assert.Error(t, err)
}

func TestVerdictsNeedTheWholeIntervalOnOneSide(t *testing.T) {
	straddles := Ratio{Value: 0.8, Low: 0.76, High: 0.84, Pairs: 10}
	assert.Equal(t, Inconclusive, straddles.AtMost(0.8))
	below := Ratio{Value: 0.7, Low: 0.67, High: 0.73, Pairs: 10}
	assert.Equal(t, Met, below.AtMost(0.8))
	assert.Equal(t, Missed, below.AtLeast(0.8))
	assert.Equal(t, Met, Ratio{Value: 0.98, Low: 0.95, High: 1.01, Pairs: 10}.NotWorse(true), "a tie is not slower")
	assert.Equal(t, Missed, Ratio{Value: 0.9, Low: 0.88, High: 0.92, Pairs: 10}.NotWorse(true))
}

func TestFitSlopeRecoversAPowerLaw(t *testing.T) {
	n := []float64{1e3, 1e3, 1e4, 1e4, 1e5, 1e5}
	y := make([]float64, len(n))
	for i := range n {
		y[i] = 3 * math.Pow(n[i], 1.2) * (1 + 0.01*float64(i%2))
	}
	s, err := FitSlope(n, y)
	require.NoError(t, err)
	assert.InDelta(t, 1.2, s.Value, 0.01)
	assert.True(t, s.Low <= 1.2 && 1.2 <= s.High, "%v", s)
	assert.True(t, s.Steep())
	_, err = FitSlope([]float64{1e3, 1e3, 1e3}, []float64{1, 2, 3})
	assert.ErrorContains(t, err, "two different sizes")
}
