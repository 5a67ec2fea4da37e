package workqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// countedRun is a Run, on a queue of its own, of a reconcile that counts
// its calls.
type countedRun struct {
	q     *Queue[string]
	mu    sync.Mutex // held while the reconcile runs
	calls int        // of every key, so far
}

// startCountedRun starts Run with opts on a new queue whose rate limiter
// is limiter, of a reconcile whose nth call (counting every key's, from
// 1) returns outcome(key, n). The calls never overlap: each runs with
// r.mu held, so whatever outcome keeps may be read under r.mu too. Run
// is stopped, and waited for, when the test ends.
func startCountedRun(t *testing.T, limiter RateLimiter[string], opts RunOptions[string], outcome func(key string, n int) (Result, error)) *countedRun {
	r := &countedRun{q: New(Options[string]{RateLimiter: limiter})}
	t.Cleanup(startRun(r.q, func(_ context.Context, key string) (Result, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.calls++
		return outcome(key, r.calls)
	}, opts))
	return r
}

// startCappedCountedRun is startCountedRun with MaxRetries 3 and an
// overall limiter (a bucket, which counts no keys), errors discarded.
func startCappedCountedRun(t *testing.T, outcome func(key string, n int) (Result, error)) *countedRun {
	return startCountedRun(t, must(NewBucketRateLimiter[string](1000, 1000)), RunOptions[string]{MaxRetries: 3, OnError: func(string, error) {}}, outcome)
}

// addAndSettle adds key to r's queue and waits a simulated minute, and
// until every goroutine of the bubble is blocked.
func (r *countedRun) addAndSettle(key string) {
	r.q.Add(key)
	time.Sleep(time.Minute)
	synctest.Wait()
}

// RunOptions.MaxRetries: "when positive, caps the retries of one key: a
// key that fails again after that many retries is given up on". With an
// overall limiter (a bucket, which counts no keys) the cap holds too: the
// queue counts each key's retries itself. (Found by a bug hunt: the cap
// asked the limiter, and a bucket answers 0.)
func TestMaxRetriesCapsRetriesWhateverTheRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startCappedCountedRun(t, func(string, int) (Result, error) { return Result{}, errors.New("boom") })
		r.addAndSettle("k")
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Equal(t, int64(1), r.q.GaveUp(), "given up after 3 retries")
		assert.Equal(t, 4, r.calls, "1 try + 3 retries")
	})
}

// An error marked KeepRetrying is retried past MaxRetries, until the
// reconcile succeeds; a Terminal error inside it is still given up on.
func TestAnErrorMarkedKeepRetryingIsRetriedPastMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startCappedCountedRun(t, func(key string, n int) (Result, error) {
			switch {
			case key == "terminal":
				return Result{}, KeepRetrying(Terminal(errors.New("bad spec")))
			case n <= 10:
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, nil
		})
		r.addAndSettle("k")
		r.mu.Lock()
		assert.Equal(t, int64(0), r.q.GaveUp(), "never given up")
		assert.Equal(t, 11, r.calls, "retried past 3 until it succeeded")
		r.mu.Unlock()

		r.addAndSettle("terminal")
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Equal(t, int64(1), r.q.GaveUp(), "a Terminal error inside is given up on")
		assert.Equal(t, 12, r.calls, "once")
	})
}

// The retries of errors marked KeepRetrying do not count against
// MaxRetries: a key whose marked failures are through still has its own
// retries, and is given up only after MaxRetries unmarked ones.
func TestRetriesMarkedKeepRetryingLeaveAKeyItsOwnMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startCappedCountedRun(t, func(_ string, n int) (Result, error) {
			if n <= 6 {
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, errors.New("own failure")
		})
		r.addAndSettle("k")
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Equal(t, int64(1), r.q.GaveUp())
		assert.Equal(t, 6+4, r.calls, "six marked, then one try and three retries of its own")
	})
}
