package sharedinformer

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/metrics"
)

// at is a moment the given offset after a fixed origin.
func at(d time.Duration) time.Time { return time.Unix(1_000_000, 0).Add(d) }

func TestRequestsWaitingSideBySideCountTheirTimeOnce(t *testing.T) {
	var h heldBack
	// Two requests wait together for 0.6 s: 0.6 s held back, not 1.2 s,
	// which is under a tenth of the window.
	h.enter(at(0))
	h.enter(at(0))
	_, ok := h.leave(at(0), at(600*time.Millisecond))
	assert.False(t, ok)
	_, ok = h.leave(at(0), at(600*time.Millisecond))
	assert.False(t, ok, "0.6 s held back is under a tenth of the 10 s window")

	// A third waits 0.5 s more, alone: 1.1 s in all, reported at once.
	h.enter(at(2 * time.Second))
	r, ok := h.leave(at(2*time.Second), at(2500*time.Millisecond))
	require.True(t, ok)
	assert.Equal(t, 2500*time.Millisecond, r.span)
	assert.InDelta(t, 1.1/2.5, r.share, 1e-9)
	assert.Equal(t, 3, r.requests)
	assert.Equal(t, 3, r.waited)
	assert.Equal(t, 600*time.Millisecond, r.longest)
}

func TestAThrottledWindowIsReportedOnceAndTheNextWindowStartsAfresh(t *testing.T) {
	var h heldBack
	h.enter(at(0))
	_, ok := h.leave(at(0), at(2*time.Second))
	require.True(t, ok, "2 s of 10 held back")
	h.enter(at(3 * time.Second))
	_, ok = h.leave(at(3*time.Second), at(5*time.Second))
	assert.False(t, ok, "the window was reported already")

	// 11 s: a new window, in which a request waits half a second.
	h.enter(at(11 * time.Second))
	_, ok = h.leave(at(11*time.Second), at(11500*time.Millisecond))
	assert.False(t, ok, "half a second of the new window")
	h.enter(at(12 * time.Second))
	r, ok := h.leave(at(12*time.Second), at(12600*time.Millisecond))
	require.True(t, ok, "1.1 s of the new window")
	assert.Equal(t, 1600*time.Millisecond, r.span)
	assert.Equal(t, 2, r.requests)
}

func TestARequestThatFoundATokenIsCountedButNotAsWaiting(t *testing.T) {
	var h heldBack
	h.enter(at(0))
	h.leave(at(0), at(10*time.Microsecond))
	assert.Equal(t, 1, h.w.requests)
	assert.Zero(t, h.w.waited)
	assert.Equal(t, 10*time.Microsecond, h.w.busy)
}

func TestAWaitThatOutlastsItsWindowIsReportedWhenItEnds(t *testing.T) {
	var h heldBack
	_, ok := h.enter(at(0))
	require.False(t, ok)
	r, ok := h.leave(at(0), at(12*time.Second))
	require.True(t, ok, "one request held back for 12 s")
	assert.Equal(t, 10*time.Second, r.span, "the window it began in, to its end")
	assert.Equal(t, 2*time.Second, r.ago, "which was 2 s ago")
	assert.InDelta(t, 1.0, r.share, 1e-9)
	assert.Equal(t, 1, r.waited)
	assert.Equal(t, 12*time.Second, r.longest)
	assert.Zero(t, h.w.waiting, "the new window begins with nothing waiting")
	assert.Equal(t, at(10*time.Second), h.w.start, "the new window begins at the old one's end: the wait was held back there too")
}

// A client throttled for 25 s, one request after another at 2 a second:
// a report at about 1 s, 11 s and 21 s, one every window, not one for
// every request.
func TestAClientThrottledForLongIsReportedOnceEveryWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		r := &throttleReporter{
			RateLimiter: flowcontrol.NewTokenBucketRateLimiter(2, 1),
			logger:      func() *slog.Logger { return logger },
		}
		for range 50 {
			require.NoError(t, r.Wait(context.Background()))
		}
		assert.Equal(t, 3, strings.Count(buf.String(), "\n"), buf.String())
		assert.Contains(t, buf.String(), "heldBack=100%")
	})
}

// The case no single wait shows: four workers that share 50 tokens a
// second and each wait about 80 ms for every request. No wait is long,
// yet requests are held back nearly all the time, and the log says so,
// with durations written as durations.
func TestFourWorkersThatEachWaitAShortTimeForEveryRequestAreReportedAsThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		mem := metrics.NewMemory()
		waits, err := mem.Histogram(descRateLimiterWait, []string{"https://example"})
		require.NoError(t, err)
		logger := slog.New(slog.NewJSONHandler(&buf, nil))
		r := &throttleReporter{
			RateLimiter: flowcontrol.NewTokenBucketRateLimiter(50, 1),
			limits:      "QPS 50, burst 1",
			logger:      func() *slog.Logger { return logger },
			waits:       waits,
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					require.NoError(t, r.Wait(context.Background()))
					time.Sleep(2 * time.Millisecond) // the request itself
				}
			})
		}
		wg.Wait()

		log := buf.String()
		require.Equal(t, 1, strings.Count(log, "\n"), "one warning in 2 s of throttling: %s", log)
		assert.Contains(t, log, `"msg":"sharedinformer: client-side throttling: requests waited for the client's rate limiter before reaching the API server"`)
		assert.Contains(t, log, `"limits":"QPS 50, burst 1"`)
		assert.Regexp(t, `"heldBack":"(9\d|100)%"`, log, "the limiter held requests back nearly all the time")
		assert.Regexp(t, `"longest":"(\d\d)ms"`, log, "yet no wait reached 100 ms, a duration written as one")
		count, ok := mem.Value(descRateLimiterWait.Name, "https://example")
		require.True(t, ok)
		assert.Equal(t, 100.0, count, "every request's wait observed")
		sum, ok := mem.Sum(descRateLimiterWait.Name, "https://example")
		require.True(t, ok)
		assert.Greater(t, sum, 5.0, "seconds waited in all: four workers held back for about 2 s")
	})
}

func TestRequestsSpacedOutForLessThanATenthOfTheWindowAreNotReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf testlog.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		r := &throttleReporter{
			RateLimiter: flowcontrol.NewTokenBucketRateLimiter(50, 1),
			logger:      func() *slog.Logger { return logger },
		}
		// 40 requests one after another: 39 waits of 20 ms, 0.78 s of the
		// window held back.
		for range 40 {
			require.NoError(t, r.Wait(context.Background()))
		}
		assert.Empty(t, buf.String())
		assert.Equal(t, 39, r.held.w.waited)
	})
}
