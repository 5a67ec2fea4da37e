package metrics_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/metrics"
)

func TestExponentialBucketsMultiplyFromStartByFactor(t *testing.T) {
	b, err := metrics.ExponentialBuckets(1, 2, 4)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 4, 8}, b)
}

func TestExponentialBucketsNameTheBadArgumentInsteadOfPanicking(t *testing.T) {
	for _, c := range []struct {
		start, factor float64
		count         int
		want          string
	}{
		{0, 10, 3, "start 0 must be a finite number above 0"},
		{-1, 10, 3, "start -1 must be"},
		{math.NaN(), 10, 3, "start NaN must be"},
		{math.Inf(1), 10, 3, "start +Inf must be"},
		{1, 1, 3, "factor 1 must be a finite number above 1"},
		{1, 0.5, 3, "factor 0.5 must be"},
		{1, math.NaN(), 3, "factor NaN must be"},
		{1, math.Inf(1), 3, "factor +Inf must be"},
		{1, 10, 0, "count 0 must be at least 1"},
		{1, 10, 400, "count 400 is too many"},
	} {
		b, err := metrics.ExponentialBuckets(c.start, c.factor, c.count)
		assert.ErrorContains(t, err, c.want)
		assert.Nil(t, b)
	}
}
