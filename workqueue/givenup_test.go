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

// Scenario: a key fails once (a transient error), so Run schedules its
// retry in 1s. Before that retry is due, the key's object changes (Add),
// and that reconcile returns Terminal: Run gives the key up. Nothing
// changes after that, yet at 1s the retry scheduled before the verdict
// fires and the key is reconciled again, reported to OnError again and
// counted in GaveUp a second time.
//
// Promise broken (Run's doc): "a Terminal error ...: OnError, a
// KindGaveUp trace event, one more in [Queue.GaveUp], Forget(key), and no
// requeue — the key waits for its next change"; TerminalError's doc:
// "forgets the key instead of retrying it".
func TestAKeyGivenUpOnIsNotReconciledAgainByARetryScheduledBeforeTheVerdict(t *testing.T) {
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

		time.Sleep(time.Hour) // no change at all
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, 2, calls, "a key given up on waits for its next change; none came")
		assert.Equal(t, int64(1), q.GaveUp(), "given up on once")
	})
}

// Scenario: MaxRetries 1. A key fails (retry scheduled in 1s); before
// the retry its object changes (Add), that reconcile fails too, and Run
// gives the key up (one retry spent). No change follows, yet the retry
// scheduled before the give-up fires at 1s and the key starts a fresh
// round: reconciled twice more and given up a second time.
//
// Promise broken (RunOptions.MaxRetries): "a key that fails again after
// that many retries is given up on ... Its next change enqueues it
// again, with a fresh count" — here no change came; and Run's doc:
// "Forget(key), and no requeue — the key waits for its next change".
func TestAKeyGivenUpOnAfterMaxRetriesIsNotRetriedAgainWithoutAChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startCountedRun(t, must(NewExponentialRateLimiter[string](time.Second, time.Second)),
			RunOptions[string]{MaxRetries: 1, OnError: func(string, error) {}},
			func(string, int) (Result, error) { return Result{}, errors.New("unavailable") })
		r.q.Add("k")
		time.Sleep(500 * time.Millisecond) // the retry is due at 1s
		r.q.Add("k")                       // a change: reconciled now, its one retry spent, given up on
		synctest.Wait()
		r.mu.Lock()
		assert.Equal(t, 2, r.calls)
		r.mu.Unlock()
		assert.Equal(t, int64(1), r.q.GaveUp())

		time.Sleep(time.Hour) // no change at all
		synctest.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		assert.Equal(t, 2, r.calls, "given up on: no retry until the key's next change")
		assert.Equal(t, int64(1), r.q.GaveUp())
	})
}
