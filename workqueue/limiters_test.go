package workqueue

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// whens calls l.When(key, now) n times and returns the delays.
func whens(l RateLimiter[string], key string, now time.Time, n int) []time.Duration {
	var out []time.Duration
	for range n {
		out = append(out, l.When(key, now))
	}
	return out
}

func TestExponentialRateLimiterDoublesPerKeyFromBaseUpToMax(t *testing.T) {
	for _, tc := range []struct {
		base, max time.Duration
		want      []time.Duration
	}{
		{ms, 10 * ms, []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 10 * ms, 10 * ms}},
		{5 * ms, 1000 * time.Second, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms}},
		{time.Second, time.Second, []time.Duration{time.Second, time.Second}},
		{2 * time.Second, time.Second, []time.Duration{time.Second}}, // base above max: max
		{0, time.Second, []time.Duration{0, 0, 0}},
	} {
		t.Run(fmt.Sprintf("%v..%v", tc.base, tc.max), func(t *testing.T) {
			l := must(NewExponentialRateLimiter[string](tc.base, tc.max))
			assert.Equal(t, tc.want, whens(l, "a", epoch, len(tc.want)))
			assert.Equal(t, len(tc.want), l.NumRequeues("a"))
			assert.Equal(t, tc.want[0], l.When("b", epoch), "keys back off separately")
			l.Forget("a")
			assert.Equal(t, 0, l.NumRequeues("a"))
			assert.Equal(t, tc.want[0], l.When("a", epoch), "Forget starts over")
		})
	}
}

// A base of 0 retries at once, always: past the 63rd failure too, where
// base·2ⁿ would overflow for any other base. (Found by review: the 64th
// failure waited max, 1000 s, where client-go waits 0.)
func TestAnExponentialRateLimiterWithBaseZeroNeverWaits(t *testing.T) {
	l := must(NewExponentialRateLimiter[string](0, 1000*time.Second))
	for n := 1; n <= 100; n++ {
		require.Zero(t, l.When("a", epoch), "failure %d of a key with base 0", n)
	}
}

func TestExponentialRateLimiterReachesItsCapWithoutOverflowing(t *testing.T) {
	l := must(NewExponentialRateLimiter[string](5*ms, 1000*time.Second))
	delays := whens(l, "a", epoch, 200)
	assert.Equal(t, 5*ms<<17, delays[17], "the 18th failure waits 655.36s")
	for n, d := range delays[18:] {
		require.Equal(t, 1000*time.Second, d, "failure %d", n+19)
	}

	huge := must(NewExponentialRateLimiter[string](time.Nanosecond, math.MaxInt64))
	delays = whens(huge, "a", epoch, 100)
	assert.Equal(t, time.Duration(1<<62), delays[62])
	assert.Equal(t, time.Duration(math.MaxInt64), delays[63], "2⁶³ns would overflow: the cap")
	assert.Equal(t, time.Duration(math.MaxInt64), delays[99])
}

func TestFastSlowRateLimiterRetriesFastThenSlow(t *testing.T) {
	l := must(NewFastSlowRateLimiter[string](ms, time.Minute, 3))
	assert.Equal(t, []time.Duration{ms, ms, ms, time.Minute, time.Minute}, whens(l, "a", epoch, 5))
	assert.Equal(t, 5, l.NumRequeues("a"))
	assert.Equal(t, ms, l.When("b", epoch))
	l.Forget("a")
	assert.Equal(t, ms, l.When("a", epoch))
}

func TestBucketRateLimiterSpreadsRetriesBeyondTheBurstAtQPS(t *testing.T) {
	// qps 10, burst 3: a token every 100ms, at most 3 saved up.
	type call struct {
		at   time.Duration // since epoch
		want time.Duration
	}
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"the burst goes at once, the rest 100ms apart", []call{
			{0, 0}, {0, 0}, {0, 0}, {0, 100 * ms}, {0, 200 * ms}, {0, 300 * ms}}},
		{"time refills the bucket", []call{
			{0, 0}, {0, 0}, {0, 0}, {0, 100 * ms}, {100 * ms, 100 * ms}, {500 * ms, 0}}},
		{"but never beyond the burst", []call{
			{0, 0}, {time.Hour, 0}, {time.Hour, 0}, {time.Hour, 0}, {time.Hour, 100 * ms}}},
		{"half a token is not a token", []call{
			{0, 0}, {0, 0}, {0, 0}, {50 * ms, 50 * ms}}},
		{"a stale now refills nothing", []call{
			{time.Second, 0}, {time.Second, 0}, {time.Second, 0}, {0, 100 * ms}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := must(NewBucketRateLimiter[string](10, 3))
			for n, c := range tc.calls {
				key := fmt.Sprint("key-", n) // the bucket is shared by every key
				assert.Equal(t, c.want, l.When(key, epoch.Add(c.at)), "call %d at +%v", n, c.at)
			}
			assert.Equal(t, 0, l.NumRequeues("key-0"))
		})
	}
}

func TestNewBucketRateLimiterRejectsABucketThatNeverRefills(t *testing.T) {
	for _, c := range []struct {
		qps   float64
		burst int
	}{{0, 10}, {math.NaN(), 10}, {10, -1}} {
		_, err := NewBucketRateLimiter[string](c.qps, c.burst)
		assert.ErrorContains(t, err, "need qps > 0 and burst ≥ 0", "qps %v burst %d", c.qps, c.burst)
	}
	assert.Equal(t, 100*ms, must(NewBucketRateLimiter[string](10, 0)).When("a", epoch), "burst 0: no token saved up")
}

func TestMaxOfRateLimiterTakesTheLongestDelayAndForgetsInEveryLimiter(t *testing.T) {
	fast := must(NewFastSlowRateLimiter[string](ms, time.Second, 2))
	exp := must(NewExponentialRateLimiter[string](ms, time.Hour))
	l := must(NewMaxOfRateLimiter[string](fast, exp))
	// fast: 1ms 1ms 1s 1s; exponential: 1ms 2ms 4ms 8ms.
	assert.Equal(t, []time.Duration{ms, 2 * ms, time.Second, time.Second}, whens(l, "a", epoch, 4))
	assert.Equal(t, 4, l.NumRequeues("a"))
	l.Forget("a")
	assert.Equal(t, 0, fast.NumRequeues("a"))
	assert.Equal(t, 0, exp.NumRequeues("a"))
}

func TestDefaultRateLimiterBacksOffPerKeyAndCapsAllRetriesAtTenPerSecond(t *testing.T) {
	l := DefaultRateLimiter[string]()
	// One key failing again and again: the exponential backoff. (Its 8
	// calls also take 8 of the bucket's 100 tokens.)
	assert.Equal(t, []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms},
		whens(l, "broken", epoch, 8))

	// Many keys failing once at the same moment: the other 92 tokens
	// go, then the bucket spaces retries 100ms apart.
	for n := range 92 {
		require.Equal(t, 5*ms, l.When(fmt.Sprint("key-", n), epoch), "key %d", n)
	}
	assert.Equal(t, 100*ms, l.When("one-too-many", epoch))
	assert.Equal(t, 200*ms, l.When("two-too-many", epoch))

	// The per-key cap.
	for range 30 {
		l.When("hopeless", epoch.Add(time.Hour))
	}
	assert.Equal(t, 1000*time.Second, l.When("hopeless", epoch.Add(time.Hour)))
}

func TestLimiterConstructorsRejectImpossibleSettings(t *testing.T) {
	_, err := NewExponentialRateLimiter[string](-time.Second, time.Second)
	assert.ErrorContains(t, err, "neither may be negative")
	_, err = NewExponentialRateLimiter[string](time.Second, -time.Millisecond)
	assert.ErrorContains(t, err, "neither may be negative")
	_, err = NewFastSlowRateLimiter[string](-ms, time.Second, 1)
	assert.ErrorContains(t, err, "none may be negative")
	_, err = NewMaxOfRateLimiter[string]()
	assert.ErrorContains(t, err, "no limiters")
	_, err = NewMaxOfRateLimiter[string](DefaultRateLimiter[string](), nil)
	assert.ErrorContains(t, err, "limiter 1 is nil")
	var failed *BucketRateLimiter[string] // a constructor whose error was ignored
	_, err = NewMaxOfRateLimiter[string](failed)
	assert.ErrorContains(t, err, "limiter 0 is nil")
}
