package workqueue

import (
	"errors"
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
		r := startCountedRun(t, must(NewExponentialRateLimiter[string](time.Second, time.Second)), RunOptions[string]{OnError: func(string, error) {}},
			func(_ string, n int) (Result, error) {
				if n == 1 {
					return Result{}, errors.New("unavailable")
				}
				return Result{}, Terminal(errors.New("spec.replicas is negative"))
			})

		r.q.Add("k")
		time.Sleep(500 * time.Millisecond) // the retry is due at 1s
		r.q.Add("k")                       // the object changes: reconciled now, given up on
		synctest.Wait()
		assert.Equal(t, 2, r.callsSoFar())
		assert.Equal(t, int64(1), r.q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 3, r.callsSoFar(), "the retry scheduled before the verdict came")
		assert.Equal(t, int64(2), r.q.GaveUp(), "and was given up on in its turn")
	})
}

// An event handler, outside Run, asks for k to be looked at again in an
// hour while k's reconcile runs, and that reconcile returns Terminal:
// the AddAfter is kept, and k is reconciled after the hour.
func TestAnAddAfterMadeWhileAKeyIsReconciledIsKeptWhenThatReconcileGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startCountedRun(t, nil /* the default limiter */, RunOptions[string]{OnError: func(string, error) {}},
			func(_ string, n int) (Result, error) {
				if n == 1 {
					time.Sleep(time.Second)
					return Result{}, Terminal(errors.New("spec.replicas is negative"))
				}
				return Result{}, nil
			})

		r.q.Add("k")
		time.Sleep(500 * time.Millisecond) // the reconcile is running
		r.q.AddAfter("k", time.Hour)       // from an event handler, outside Run
		time.Sleep(time.Second)            // the reconcile returned Terminal at 1s
		synctest.Wait()
		assert.Equal(t, int64(1), r.q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 2, r.callsSoFar(), "AddAfter(k, 1h) made during the reconcile that gave up: k is reconciled after the hour")
	})
}

// A controller retries a key fast (MaxRetries 2) and, once Run gives up,
// its OnError schedules a slow retry (q.AddAfter(key, 1h) on a
// *RetryLimitError): the slow retry comes.
func TestAnAddAfterMadeByOnErrorOnAGiveUpIsKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var r *countedRun // OnError needs its queue; it is called only after r.q.Add below
		r = startCountedRun(t, must(NewExponentialRateLimiter[string](time.Second, time.Second)), RunOptions[string]{MaxRetries: 2, OnError: func(key string, err error) {
			if _, ok := errors.AsType[*RetryLimitError](err); ok {
				r.q.AddAfter(key, time.Hour) // the slow retry, after the fast ones
			}
		}}, func(string, int) (Result, error) { return Result{}, errors.New("unavailable") })

		r.q.Add("k")
		time.Sleep(time.Minute) // the first try and two retries, then given up
		synctest.Wait()
		assert.Equal(t, 3, r.callsSoFar())
		assert.Equal(t, int64(1), r.q.GaveUp())

		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Greater(t, r.callsSoFar(), 3, "OnError's AddAfter(k, 1h) brings k back after the hour")
	})
}

// callsSoFar is r.calls, read under r.mu.
func (r *countedRun) callsSoFar() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}
