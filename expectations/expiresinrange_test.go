package expectations_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/expectations"
)

// ExpiresIn is positive while a key is unsatisfied, however long the TTL
// ("never give up on an event": the longest Duration) and wherever the
// clock has gone: it saturates at the longest Duration instead of
// wrapping below zero, which Run would take for a terminal error when
// passed as Result.RequeueAfter, as the package's pattern does. (Found
// by a review: the longest TTL gave -2562047h47m16.854775808s.)
func TestExpiresInIsPositiveWhileUnsatisfiedForTheLongestTTL(t *testing.T) {
	now := time.Unix(0, 0)
	exp, err := expectations.New[string](expectations.Options{TTL: math.MaxInt64, Now: func() time.Time { return now }})
	require.NoError(t, err)
	exp.ExpectCreations("web", 1)
	require.False(t, exp.Satisfied("web"))
	require.Equal(t, time.Duration(math.MaxInt64), exp.ExpiresIn("web"))

	now = now.Add(-time.Hour) // the clock went back
	require.False(t, exp.Satisfied("web"))
	require.Equal(t, time.Duration(math.MaxInt64), exp.ExpiresIn("web"))
}
