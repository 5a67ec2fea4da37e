package workqueue

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// A reconcile that panics with a Terminal error (a helper's
// must(err) on an error marked terminal below it) panicked all the
// same: a panic is a bug, "recovered, reported to OnError as a
// *PanicError, then retried like an error" (Run's doc; docs/07's table),
// traced KindPanicked, not given up on as a returned Terminal error is.
func TestAReconcileThatPanicsWithATerminalErrorIsRetriedLikeAnyPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kinds lines
		q := New(Options[string]{Trace: func(e informer.TraceEvent) {
			if e.Kind == KindPanicked || e.Kind == KindGaveUp {
				kinds.add(e.Kind)
			}
		}})
		var attempts lines
		reported := make(chan error, 10)
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			if len(attempts.get()) == 1 {
				panic(Terminal(errors.New("spec.replicas is negative")))
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(_ string, err error) { reported <- err }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"a", "a"}, attempts.get(), "the panic was retried")
		assert.Zero(t, q.GaveUp(), "a panic is not given up on")
		assert.Equal(t, []string{KindPanicked}, kinds.get())
		require.Len(t, reported, 1)
		_, ok := errors.AsType[*PanicError](<-reported)
		assert.True(t, ok, "OnError got a *PanicError")
	})
}

// The mark counts where the reconcile put it: a Terminal error returned
// by a reconcile that wraps a panic it recovered itself
// (NewPanicError, as a wrapper of a ReconcileFunc makes one) is a
// returned Terminal error, given up on ("Returned by a reconcile, Run
// ... forgets the key"), not a panic with a Terminal error inside it.
func TestAReturnedTerminalErrorWrappingARecoveredPanicIsGivenUpOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var kinds lines
		q := New(Options[string]{Trace: func(e informer.TraceEvent) {
			if e.Kind == KindPanicked || e.Kind == KindGaveUp {
				kinds.add(e.Kind)
			}
		}})
		var attempts lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			return Result{}, Terminal(NewPanicError("index out of range, for a spec that can never work"))
		}, RunOptions[string]{OnError: func(string, error) {}})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"a"}, attempts.get(), "a returned Terminal error is not retried")
		assert.EqualValues(t, 1, q.GaveUp())
		assert.Equal(t, []string{KindGaveUp}, kinds.get())
	})
}

// "a panic: ... retried like an error, whatever its value" (Run's doc):
// a panic with a KeepRetrying error is a panic too, given up on at
// MaxRetries like any, not retried past them as a returned
// KeepRetrying error is.
func TestAReconcileThatPanicsWithAKeepRetryingErrorIsGivenUpOnAtMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var attempts lines
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			panic(KeepRetrying(errors.New("the API server is unavailable")))
		}, RunOptions[string]{MaxRetries: 2, OnError: func(string, error) {}})
		defer stop()

		q.Add("a")
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, attempts.get(), 3, "the first attempt and MaxRetries retries")
		assert.EqualValues(t, 1, q.GaveUp(), "a panic is given up on at MaxRetries, whatever its value")
	})
}
