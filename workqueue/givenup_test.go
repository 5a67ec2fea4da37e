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

// Giving a key up takes back nothing already scheduled for it: a retry
// scheduled before the verdict (a failure, then a change reconciled and
// given up on before the retry was due) still comes, and the key is
// reconciled again, with no change in between (as in client-go, whose
// delaying queue keeps what waits). Run's doc says so; a reconcile is
// idempotent, and one more of it is cheaper than a queue that must tell
// its own retries from the AddAfters of handlers and OnError (below).
func TestARetryScheduledBeforeAGiveUpStillComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Second))})
		var mu sync.Mutex
		var calls int
		stop := startRun(q, func(context.Context, string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return Result{}, errors.New("unavailable")
			}
			return Result{}, Terminal(errors.New("spec.replicas is negative"))
		}, RunOptions[string]{OnError: func(string, error) {}})
		defer stop()

		q.Add("k")
		time.Sleep(500 * time.Millisecond) // the retry is due at 1s
		q.Add("k")                         // the object changes: reconciled now, given up on
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 2, calls)
		mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 3, calls, "the retry scheduled before the verdict came")
		assert.Equal(t, int64(2), q.GaveUp(), "and was given up on in its turn")
	})
}

// An event handler, outside Run, asks for k to be looked at again in an
// hour while k's reconcile runs, and that reconcile returns Terminal:
// the AddAfter is kept, and k is reconciled after the hour.
func TestAnAddAfterMadeWhileAKeyIsReconciledIsKeptWhenThatReconcileGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var mu sync.Mutex
		var calls int
		stop := startRun(q, func(context.Context, string) (Result, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				time.Sleep(time.Second)
				return Result{}, Terminal(errors.New("spec.replicas is negative"))
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(string, error) {}})
		defer stop()

		q.Add("k")
		time.Sleep(500 * time.Millisecond) // the reconcile is running
		q.AddAfter("k", time.Hour)         // from an event handler, outside Run
		time.Sleep(time.Second)            // the reconcile returned Terminal at 1s
		synctest.Wait()
		assert.Equal(t, int64(1), q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 2, calls, "AddAfter(k, 1h) made during the reconcile that gave up: k is reconciled after the hour")
	})
}

// A controller retries a key fast (MaxRetries 2) and, once Run gives up,
// its OnError schedules a slow retry (q.AddAfter(key, 1h) on a
// *RetryLimitError): the slow retry comes.
func TestAnAddAfterMadeByOnErrorOnAGiveUpIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Second))})
		var mu sync.Mutex
		var calls int
		stop := startRun(q, func(context.Context, string) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return Result{}, errors.New("unavailable")
		}, RunOptions[string]{MaxRetries: 2, OnError: func(key string, err error) {
			if _, ok := errors.AsType[*RetryLimitError](err); ok {
				q.AddAfter(key, time.Hour) // the slow retry, after the fast ones
			}
		}})
		defer stop()

		q.Add("k")
		time.Sleep(time.Minute) // the first try and two retries, then given up
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 3, calls)
		mu.Unlock()
		assert.Equal(t, int64(1), q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Greater(t, calls, 3, "OnError's AddAfter(k, 1h) brings k back after the hour")
	})
}
