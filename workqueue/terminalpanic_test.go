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
