package workqueue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// kinds records the Kind of every Run event a queue emits.
func kinds(into *lines) func(informer.TraceEvent) {
	return func(e informer.TraceEvent) {
		switch e.Kind {
		case KindFailed, KindPanicked, KindGaveUp:
			into.add(e.Kind + " " + e.Key)
		}
	}
}

func TestRequeueAfterReconcilesTheKeyAgainLaterWithoutCountingAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var attempts lines
		start := time.Now()
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(fmt.Sprintf("%s at %v", key, time.Since(start)))
			if len(attempts.get()) < 3 {
				return Result{RequeueAfter: 10 * time.Second}, nil
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(string, error) { t.Error("no error was returned") }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		assert.Equal(t, []string{"a at 0s", "a at 10s", "a at 20s"}, attempts.get())
		assert.Equal(t, 0, q.NumRequeues("a"), "a requeue after a duration is not a retry")
	})
}

func TestATerminalErrorIsReportedOnceAndNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events, attempts lines
		q := New(Options[string]{Trace: kinds(&events)})
		invalid := errors.New("spec.replicas is negative")
		reported := make(chan error, 10)
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			return Result{}, Terminal(invalid)
		}, RunOptions[string]{OnError: func(_ string, err error) { reported <- err }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Hour)
		assert.Equal(t, []string{"a"}, attempts.get(), "never retried")
		require.Len(t, reported, 1)
		err := <-reported
		assert.ErrorIs(t, err, invalid)
		assert.Equal(t, []string{"gave-up a"}, events.get())
		assert.Zero(t, q.Len())
		assert.Equal(t, 0, q.NumRequeues("a"), "forgotten")

		q.Add("a") // the key's next change
		synctest.Wait()
		assert.Len(t, attempts.get(), 2, "a new change enqueues it again")
	})
}

func TestAKeyIsGivenUpOnceItsRetriesReachMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var events, attempts lines
		q := New(Options[string]{Trace: kinds(&events), RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		reported := make(chan error, 10)
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			return Result{}, errors.New("unavailable")
		}, RunOptions[string]{MaxRetries: 2, OnError: func(_ string, err error) { reported <- err }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Hour)
		assert.Len(t, attempts.get(), 3, "the first try and two retries")
		assert.Equal(t, []string{"failed a", "failed a", "gave-up a"}, events.get())
		require.Len(t, reported, 3)
		<-reported
		<-reported
		limit, ok := errors.AsType[*RetryLimitError](<-reported)
		require.True(t, ok)
		assert.Equal(t, 2, limit.Retries)
		assert.EqualError(t, limit, "giving up after 2 retries: unavailable")
		assert.Equal(t, 0, q.NumRequeues("a"), "forgotten, so its next change starts afresh")
	})
}

func TestWhenAReconcileReturnsAResultAndAnErrorTheErrorWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts lines
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		start := time.Now()
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(fmt.Sprintf("%s at %v", key, time.Since(start)))
			if len(attempts.get()) == 1 {
				return Result{RequeueAfter: time.Hour}, errors.New("conflict")
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(string, error) {}})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		assert.Equal(t, []string{"a at 0s", "a at 1s"}, attempts.get(), "retried after the backoff, not after an hour")
	})
}

func TestANegativeRequeueAfterIsReportedAsAMistake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		reported := make(chan error, 10)
		stop := startRun(q, func(context.Context, string) (Result, error) {
			return Result{RequeueAfter: -time.Second}, nil
		}, RunOptions[string]{OnError: func(_ string, err error) { reported <- err }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		require.Len(t, reported, 1, "reported once, not retried")
		assert.ErrorContains(t, <-reported, "negative RequeueAfter (-1s)")
	})
}

func TestTerminalOfNilIsNil(t *testing.T) {
	assert.NoError(t, Terminal(nil))
}

// A reconcile that returns a nil *apierrors.StatusError in its error
// (the classic typed nil: `var err *apierrors.StatusError; ...; return
// Result{}, err`), bare, marked, or joined to another error, fails its
// key and keeps its mark; it does not crash the process. Calling Error
// on such an error dereferences the nil pointer, and Run's process calls
// it (the trace's detail, the default log) on the worker goroutine,
// outside any recover. The test drives q.process, the body of Run's
// worker loop, so that a panic can be caught; under Run it would be fatal.
func TestATypedNilErrorFromReconcileIsAFailureOfItsKeyNotACrash(t *testing.T) {
	var typedNil *apierrors.StatusError // "no error", as a typed nil
	for _, c := range []struct {
		name     string
		err      error
		terminal bool
	}{
		{"bare", typedNil, false},
		{"terminal", Terminal(typedNil), true},
		{"keep retrying", KeepRetrying(typedNil), false},
		{"joined", errors.Join(errors.New("status update failed"), typedNil), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := New(Options[string]{})
			defer q.ShutDown()
			q.Add("k")
			key := mustGet(t, q)
			var reported []error
			var panicked any
			func() {
				defer func() { panicked = recover() }()
				q.process(context.Background(), key, func(context.Context, string) (Result, error) {
					return Result{}, c.err
				}, 0, func(_ string, err error) { reported = append(reported, err) }, nil)
			}()
			assert.Nil(t, panicked, "Run's handling of the returned error panicked on its worker goroutine")
			if assert.Len(t, reported, 1, "OnError receives every error reconcile returns") {
				assert.ErrorContains(t, reported[0], "panics when read")
				assert.Equal(t, c.terminal, isTerminal(reported[0]), "the error's mark is kept")
			}
			assert.Equal(t, map[bool]int64{true: 1, false: 0}[c.terminal], q.GaveUp())
		})
	}
}
