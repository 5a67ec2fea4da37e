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

// Run's doc: "ctx.Err() once ctx is done ... the key is added again ...
// so that whoever runs the queue next reconciles it"; examples/05-live-view
// restarts Run over the same queue to change its workers. The queue
// counts the retries of KeepRetrying errors beside its own count
// (NumRequeues), so the next Run does not take six kept retries for the
// key's own and give it up at its first own failure.
func TestRetriesMarkedKeepRetryingStillLeaveAKeyItsOwnMaxRetriesAfterRunRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewBucketRateLimiter[string](1000, 1000))})
		var attempts int
		var mu sync.Mutex
		ctx1, cancel1 := context.WithCancel(context.Background())
		reconcile := func(context.Context, string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if attempts <= 6 {
				if attempts == 6 {
					cancel1() // the first Run ends (a restart, a term's end) after this failure
				}
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, errors.New("own failure")
		}
		opts := RunOptions[string]{MaxRetries: 3, OnError: func(string, error) {}}
		q.Add("k")
		Run(ctx1, q, reconcile, opts) // returns once ctx1 is done
		stop := startRun(q, reconcile, opts)
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp())
		assert.Equal(t, 6+4, attempts, "six marked, then one try and three retries of its own")
	})
}

// Forget "clears key's failures" (a controller may call it for a key
// whose object was deleted), the kept ones with the others: the key's
// own failures do not then run past MaxRetries (ten, not four, for six
// kept retries).
func TestAKeyForgottenAfterKeptRetriesIsStillGivenUpAfterMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Second))})
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
		time.Sleep(5*time.Second + 500*time.Millisecond) // attempts at 0s..5s, the next due at 6s
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 6, attempts)
		mu.Unlock()
		q.Forget("k")
		time.Sleep(time.Minute)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp())
		assert.Equal(t, 6+4, attempts, "after the Forget: one try and three retries of its own")
	})
}

// RetryLimitError.Retries is "how many times the key was retried" for
// failures of its own before it was given up: a key with six kept
// retries then four own failures under MaxRetries 3 reads "giving up
// after 3 retries", not after 9, beside the MaxRetries a reader set.
func TestARetryLimitErrorCountsOnlyTheKeysOwnRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewBucketRateLimiter[string](1000, 1000))})
		var attempts int
		gaveUp := make(chan error, 1)
		stop := startRun(q, func(context.Context, string) (Result, error) {
			attempts++ // one worker: no other goroutine touches it
			if attempts <= 6 {
				return Result{}, KeepRetrying(errors.New("refused"))
			}
			return Result{}, errors.New("own failure")
		}, RunOptions[string]{MaxRetries: 3, OnError: func(_ string, err error) {
			if limit, ok := errors.AsType[*RetryLimitError](err); ok {
				gaveUp <- limit
			}
		}})
		defer stop()
		q.Add("k")
		time.Sleep(time.Minute)
		synctest.Wait()
		err := <-gaveUp
		limit, _ := errors.AsType[*RetryLimitError](err)
		assert.Equal(t, 3, limit.Retries, "%v", err)
		assert.EqualError(t, err, "giving up after 3 retries: own failure")
	})
}
