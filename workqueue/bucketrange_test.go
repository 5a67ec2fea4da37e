package workqueue_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/workqueue"
)

// NewBucketRateLimiter accepts any qps above zero. A slow bucket (one
// retry a century) owes, after a few failures, a delay beyond
// time.Duration's range: it waits the longest Duration then, never a
// delay that wrapped below zero and retried at once. (Found by a review:
// the third failure's delay was -2562047h47m16.854775808s.)
func TestASlowBucketNeverRetriesAtOnceWhenItsDelayIsBeyondDurationsRange(t *testing.T) {
	qps := 1 / (100 * 365 * 24 * time.Hour).Seconds() // one retry a century
	bucket, err := workqueue.NewBucketRateLimiter[string](qps, 0)
	require.NoError(t, err)
	now := time.Unix(0, 0)
	require.Equal(t, 100*365*24*time.Hour, bucket.When("web", now).Round(time.Hour))
	require.Equal(t, 200*365*24*time.Hour, bucket.When("web", now).Round(time.Hour))
	for i := 3; i <= 5; i++ {
		require.Equal(t, time.Duration(math.MaxInt64), bucket.When("web", now), "failure %d", i)
	}
}
