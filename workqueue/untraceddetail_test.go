package workqueue

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/informer"
)

// countedError counts how often its text is built.
type countedError struct{ reads *atomic.Int64 }

func (e countedError) Error() string { e.reads.Add(1); return "unavailable" }

// emit's promise: "with no hook neither the key's text nor any Detail
// string is ever built". Run's failed and gave-up events carry the
// error's text as their Detail: with no hook, Run reads that text once
// less than with one (its own reads, to check the error can be read, are
// the same either way).
func TestWithNoTraceHookRunBuildsNoDetailOfItsFailureEvents(t *testing.T) {
	reads := func(trace informer.TraceHook, maxRetries int) int64 {
		var n atomic.Int64
		synctest.Test(t, func(t *testing.T) {
			q := New(Options[string]{Trace: trace})
			stop := startRun(q, func(context.Context, string) (Result, error) {
				return Result{}, countedError{&n}
			}, RunOptions[string]{MaxRetries: maxRetries, OnError: func(string, error) {}})
			q.Add("a")
			time.Sleep(time.Hour)
			synctest.Wait()
			stop()
		})
		return n.Load()
	}
	hook := func(informer.TraceEvent) {}
	for _, maxRetries := range []int{1, 3} { // failures, then a give-up
		traced, untraced := reads(hook, maxRetries), reads(nil, maxRetries)
		if untraced >= traced {
			t.Errorf("MaxRetries %d: the error's text was built %d times with no hook, %d with one: the events' Details were built with no hook",
				maxRetries, untraced, traced)
		}
	}
}

// lockProbe is an error whose text is read, in the worker, while q.mu
// is held or not: an Error that calls the queue (q.Len,
// q.NumRequeues: "failed after 3 retries") would deadlock if it were.
type lockProbe struct {
	q    *Queue[string]
	held *atomic.Bool
}

func (e lockProbe) Error() string {
	if e.q.mu.TryLock() {
		e.q.mu.Unlock()
	} else {
		e.held.Store(true)
	}
	return "unavailable"
}

// With a hook, Run builds the failed event's Detail, the error's text, as
// it did before it built it lazily: outside the queue's lock. An Error
// method that asks the queue something (its Len, the key's NumRequeues)
// must not find the lock held by the worker that reads it, or the worker
// deadlocks and with it every caller of the queue.
func TestAnErrorsTextIsReadForTheTraceOutsideTheQueuesLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var held atomic.Bool
		q := New(Options[string]{Trace: func(informer.TraceEvent) {}})
		var failed atomic.Bool
		stop := startRun(q, func(context.Context, string) (Result, error) {
			if failed.Swap(true) {
				return Result{}, nil
			}
			return Result{}, lockProbe{q, &held}
		}, RunOptions[string]{OnError: func(string, error) {}})
		defer stop()
		q.Add("a")
		time.Sleep(time.Minute)
		synctest.Wait()
		if held.Load() {
			t.Error("the error's text was read for the trace with the queue's lock held: an Error that calls q.Len deadlocks the worker")
		}
	})
}
