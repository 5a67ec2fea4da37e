package sharding

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
)

// Each key's retries double from 5 ms and stop growing at the lease; two
// keys count their failures apart, so one key's failures never delay
// another's first retry.
func TestRetryLimiterDoublesEachKeysDelayUpToTheLease(t *testing.T) {
	limiter, err := RetryLimiter(time.Second)
	require.NoError(t, err)
	a, b := informer.Key{Name: "a"}, informer.Key{Name: "b"}
	now := time.Unix(0, 0)
	var got []time.Duration
	for range 10 {
		got = append(got, limiter.When(a, now))
	}
	require.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond,
		80 * time.Millisecond, 160 * time.Millisecond, 320 * time.Millisecond, 640 * time.Millisecond, time.Second, time.Second}, got)
	require.Equal(t, 5*time.Millisecond, limiter.When(b, now))
	require.Equal(t, time.Second, RetryTuning(time.Second).BackoffMax)
}

func TestRetryLimiterRejectsALeaseThatIsNotPositive(t *testing.T) {
	for _, lease := range []time.Duration{0, -time.Second} {
		_, err := RetryLimiter(lease)
		var cfgErr *ConfigError
		require.True(t, errors.As(err, &cfgErr), "lease %v: %v", lease, err)
		require.Contains(t, err.Error(), "must be positive")
	}
}
