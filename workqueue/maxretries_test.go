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

// RunOptions.MaxRetries: "when positive, caps the retries of one key: a
// key that fails again after that many retries is given up on". With an
// overall limiter (a bucket, which counts no keys) the cap holds too: the
// queue counts each key's retries itself. (Found by a bug hunt: the cap
// asked the limiter, and a bucket answers 0.)
func TestMaxRetriesCapsRetriesWhateverTheRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewBucketRateLimiter[string](1000, 1000))})
		var attempts int
		var mu sync.Mutex
		stop := startRun(q, func(context.Context, string) (Result, error) {
			mu.Lock()
			attempts++
			mu.Unlock()
			return Result{}, errors.New("boom")
		}, RunOptions[string]{MaxRetries: 3, OnError: func(string, error) {}})
		defer stop()
		q.Add("k")
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp(), "given up after 3 retries")
		assert.Equal(t, 4, attempts, "1 try + 3 retries")
	})
}

// An error marked KeepRetrying is retried past MaxRetries, until the
// reconcile succeeds; a Terminal error inside it is still given up on.
func TestAnErrorMarkedKeepRetryingIsRetriedPastMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewBucketRateLimiter[string](1000, 1000))})
		var attempts int
		var mu sync.Mutex
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			switch {
			case key == "terminal":
				return Result{}, KeepRetrying(Terminal(errors.New("bad spec")))
			case attempts <= 10:
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, nil
		}, RunOptions[string]{MaxRetries: 3, OnError: func(string, error) {}})
		defer stop()
		q.Add("k")
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, int64(0), q.GaveUp(), "never given up")
		assert.Equal(t, 11, attempts, "retried past 3 until it succeeded")
		mu.Unlock()

		q.Add("terminal")
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp(), "a Terminal error inside is given up on")
		assert.Equal(t, 12, attempts, "once")
	})
}

// The retries of errors marked KeepRetrying do not count against
// MaxRetries: a key whose marked failures are through still has its own
// retries, and is given up only after MaxRetries unmarked ones.
func TestRetriesMarkedKeepRetryingLeaveAKeyItsOwnMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewBucketRateLimiter[string](1000, 1000))})
		var attempts int
		var mu sync.Mutex
		stop := startRun(q, func(context.Context, string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if attempts <= 6 {
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, errors.New("own failure")
		}, RunOptions[string]{MaxRetries: 3, OnError: func(string, error) {}})
		defer stop()
		q.Add("k")
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp())
		assert.Equal(t, 6+4, attempts, "six marked, then one try and three retries of its own")
	})
}
