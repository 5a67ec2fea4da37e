package workqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
)

// These tests run inside synctest bubbles: time is virtual, time.Sleep
// returns as soon as every goroutine in the bubble is blocked, and
// synctest.Wait returns once they all are. So "the workers are idle now"
// and "a retry 1s later" are exact, and no test waits for real. (The
// queue runs on the real clock here; synctest makes the real clock fake.)

// startRun runs Run in a goroutine. stop cancels Run's context and waits
// for Run to return.
func startRun[K comparable](q *Queue[K], reconcile ReconcileFunc[K], opts RunOptions[K]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		Run(ctx, q, reconcile, opts)
	}()
	return func() { cancel(); <-returned }
}

// lines is a list of strings that many goroutines append to.
type lines struct {
	mu    sync.Mutex
	lines []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func TestRunRetriesAFailingKeyWithBackoffThenForgetsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		var attempts, reported lines
		start := time.Now()
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(fmt.Sprintf("%s at %v", key, time.Since(start)))
			if len(attempts.get()) < 3 {
				return Result{}, errors.New("not yet")
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(key string, err error) { reported.add(key + ": " + err.Error()) }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Minute)
		assert.Equal(t, []string{"a at 0s", "a at 1s", "a at 3s"}, attempts.get(), "retried after 1s, then 2s more")
		assert.Equal(t, []string{"a: not yet", "a: not yet"}, reported.get())
		assert.Equal(t, 0, q.NumRequeues("a"), "the success forgot the failures")
	})
}

func TestRunRecoversAPanicReportsItAndRequeuesTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		boom := errors.New("boom")
		var attempts lines
		reported := make(chan error, 10)
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			attempts.add(key)
			if len(attempts.get()) == 1 {
				panic(boom)
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(_ string, err error) { reported <- err }})
		defer stop()

		q.Add("a")
		time.Sleep(time.Second)
		assert.Equal(t, []string{"a", "a"}, attempts.get(), "the same single worker lived on to retry")
		require.Len(t, reported, 1)
		err := <-reported
		p, ok := errors.AsType[*PanicError](err)
		require.True(t, ok, "a panic is reported as a *PanicError")
		assert.Equal(t, "boom", p.Value)
		assert.ErrorIs(t, err, boom, "an error panic value is unwrapped")
		assert.Contains(t, string(p.Stack), "run_test.go", "the stack shows where it panicked")
	})
}

func TestRunReportsAPanicEvenWhenItsValueIsTheContextsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		reported := make(chan error, 1)
		stop := startRun(q, func(ctx context.Context, _ string) (Result, error) {
			<-ctx.Done()
			panic(ctx.Err())
		}, RunOptions[string]{OnError: func(_ string, err error) { reported <- err }})
		q.Add("a")
		synctest.Wait()
		stop()
		require.Len(t, reported, 1, "a panic is never mistaken for a cancellation")
		assert.ErrorIs(t, <-reported, context.Canceled)
	})
}

func TestRunReturnsOnlyAfterTheReconcilesInFlightHaveReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var finished lines
		ctx, cancel := context.WithCancel(context.Background())
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			Run(ctx, q, func(ctx context.Context, key string) (Result, error) {
				<-ctx.Done()
				time.Sleep(time.Second) // winding down takes a while
				finished.add(key)
				return Result{}, nil
			}, RunOptions[string]{Workers: 2})
		}()
		q.Add("a")
		synctest.Wait() // one worker holds "a", the other waits in Get
		cancel()
		synctest.Wait() // the idle worker has returned; the busy one sleeps
		select {
		case <-returned:
			t.Fatal("Run returned while a reconcile was still running")
		default:
		}
		<-returned
		assert.Equal(t, []string{"a"}, finished.get())
	})
}

func TestRunQueuesAKeyInterruptedByCancellationAgainWithoutCountingAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		reported := 0
		stop := startRun(q, func(ctx context.Context, _ string) (Result, error) {
			<-ctx.Done()
			return Result{}, fmt.Errorf("reading the cache: %w", ctx.Err())
		}, RunOptions[string]{OnError: func(string, error) { reported++ }})
		q.Add("a")
		synctest.Wait()
		stop()
		assert.Equal(t, 1, q.Len(), "the key is back in the queue for the next Run")
		assert.Equal(t, 0, q.NumRequeues("a"))
		assert.Equal(t, 0, reported)
	})
}

// An error that is the end of Run's ctx is no failure of its key: with
// the default log and a Metrics hook, nothing is logged, counted or
// retried with backoff; the key is only queued again. Chapter 07's table
// once said every error went to OnError and AddRateLimited.
func TestAnErrorOfTheContextsEndIsNeitherReportedNorLoggedNorCounted(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		metrics := NewMetrics()
		q := New(Options[string]{Trace: metrics.Observe})
		stop := startRun(q, func(ctx context.Context, _ string) (Result, error) {
			<-ctx.Done()
			return Result{}, fmt.Errorf("reading the cache: %w", ctx.Err())
		}, RunOptions[string]{})
		q.Add("a")
		synctest.Wait()
		stop()
		assert.Equal(t, 1, q.Len(), "the key is back in the queue for the next Run")
		assert.Equal(t, 0, q.NumRequeues("a"), "no AddRateLimited")
		assert.Zero(t, q.GaveUp())
		assert.Zero(t, metrics.Snapshot(time.Now()).Failures)
	})
	assert.Empty(t, buf.String(), "no log line")
}

func TestRunReturnsByItselfOnceTheQueueIsShutDownAndDrained(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		for _, key := range []string{"a", "b", "c"} {
			q.Add(key)
		}
		var done lines
		returned := make(chan struct{})
		go func() {
			defer close(returned)
			Run(context.Background(), q, func(_ context.Context, key string) (Result, error) {
				time.Sleep(time.Second)
				done.add(key)
				return Result{}, nil
			}, RunOptions[string]{Workers: 2})
		}()
		require.NoError(t, q.ShutDownWithDrain(context.Background()))
		assert.ElementsMatch(t, []string{"a", "b", "c"}, done.get(), "drained: every queued key was reconciled")
		<-returned
	})
}

// The knob: ten keys whose reconciles take 1s each (waiting on the API
// server, say). Workers run them side by side, never more at once than
// Workers, and the whole batch takes ⌈10/Workers⌉ seconds.
func TestMoreWorkersFinishTheSameWorkSoonerButNeverExceedTheirNumber(t *testing.T) {
	for _, tc := range []struct {
		workers int
		took    time.Duration
	}{{0, 10 * time.Second}, {1, 10 * time.Second}, {3, 4 * time.Second}, {10, time.Second}, {50, time.Second}} {
		t.Run(fmt.Sprint("workers=", tc.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New(Options[int]{})
				var mu sync.Mutex
				running, most := 0, 0
				stop := startRun(q, func(context.Context, int) (Result, error) {
					mu.Lock()
					running++
					most = max(most, running)
					mu.Unlock()
					time.Sleep(time.Second)
					mu.Lock()
					running--
					mu.Unlock()
					return Result{}, nil
				}, RunOptions[int]{Workers: tc.workers})
				defer stop()

				start := time.Now()
				for key := range 10 {
					q.Add(key)
				}
				require.NoError(t, q.ShutDownWithDrain(context.Background()))
				assert.Equal(t, tc.took, time.Since(start))
				assert.Equal(t, min(max(tc.workers, 1), 10), most, "reconciles at once")
			})
		})
	}
}

// logTo sends slog.Default() to a buffer for the rest of the test.
func logTo(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	return &buf
}

// failOnce returns a reconcile that returns err on its first call and
// succeeds after.
func failOnce(err error) ReconcileFunc[string] {
	var calls sync.Map
	return func(_ context.Context, key string) (Result, error) {
		if _, again := calls.LoadOrStore(key, true); again {
			return Result{}, nil
		}
		return Result{}, err
	}
}

func TestRunLogsARetryAtWarnWithItsNumberAndDelay(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		stop := startRun(q, failOnce(errors.New("boom")), RunOptions[string]{})
		q.Add("default/web")
		time.Sleep(time.Minute)
		stop()
	})
	assert.Equal(t, `level=WARN msg="workqueue: reconcile failed; retrying" key=default/web err=boom retry=1 delay=1s`+"\n"+
		`level=INFO msg="workqueue: reconciled after failing; no longer retried" key=default/web`+"\n",
		stripTime(buf.String()), "a retry is not a failure for good, and the log says when it is over")
}

// A key blocked for one reason (a Secret of that name belongs to someone
// else) is retried for as long as it lasts; the log says so once, at
// level Warn, then at level Debug on each retry, and at Warn again when
// the reason changes, and says when the key is reconciled at last.
func TestRunLogsAKeyBlockedForTheSameReasonOnceNotOnEveryRetry(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		calls := 0
		stop := startRun(q, func(context.Context, string) (Result, error) {
			calls++
			switch {
			case calls <= 4:
				return Result{}, errors.New("secret web belongs to someone else")
			case calls == 5:
				return Result{}, errors.New("secrets is forbidden")
			}
			return Result{}, nil
		}, RunOptions[string]{})
		q.Add("shop/web")
		time.Sleep(time.Hour)
		stop()
	})
	assert.Equal(t, strings.Join([]string{
		`level=WARN msg="workqueue: reconcile failed; retrying" key=shop/web err="secret web belongs to someone else" retry=1 delay=1s`,
		`level=DEBUG msg="workqueue: reconcile failed again, as before; retrying" key=shop/web err="secret web belongs to someone else" retry=2 delay=2s`,
		`level=DEBUG msg="workqueue: reconcile failed again, as before; retrying" key=shop/web err="secret web belongs to someone else" retry=3 delay=4s`,
		`level=DEBUG msg="workqueue: reconcile failed again, as before; retrying" key=shop/web err="secret web belongs to someone else" retry=4 delay=8s`,
		`level=WARN msg="workqueue: reconcile failed; retrying" key=shop/web err="secrets is forbidden" retry=5 delay=16s`,
		`level=INFO msg="workqueue: reconciled after failing; no longer retried" key=shop/web`,
		"",
	}, "\n"), stripTime(buf.String()))
}

// A panic's stack is logged the first time, not on every retry of the
// same panic.
func TestRunLogsARepeatedPanicsStackOnce(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		stop := startRun(q, func(context.Context, string) (Result, error) { panic("nil map") }, RunOptions[string]{})
		q.Add("shop/web")
		time.Sleep(10 * time.Second)
		stop()
	})
	log := stripTime(buf.String())
	assert.Equal(t, 1, strings.Count(log, "stack="), log)
	assert.Equal(t, 1, strings.Count(log, "\n"), "the retries after the first are at level Debug: %s", log)
	assert.Contains(t, log, `level=ERROR msg="workqueue: reconcile panicked; retrying" key=shop/web err="reconcile panicked: nil map"`)
}

func TestRunLogsAConflictsRetryAtInfoBecauseItIsNormal(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})
		conflict := apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, "web", errors.New("the object has been modified"))
		stop := startRun(q, failOnce(fmt.Errorf("updating: %w", conflict)), RunOptions[string]{})
		q.Add("default/web")
		time.Sleep(time.Minute)
		stop()
	})
	assert.Contains(t, stripTime(buf.String()), `level=INFO msg="workqueue: conflict, the object changed since it was read; retrying" key=default/web`)
	assert.Contains(t, buf.String(), "retry=1 delay=1s")
}

func TestRunLogsThatAFailureIsNotRetriedOnceTheQueueIsShutDown(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		stop := startRun(q, func(context.Context, string) (Result, error) {
			q.ShutDown()
			return Result{}, errors.New("boom")
		}, RunOptions[string]{})
		q.Add("default/web")
		synctest.Wait()
		stop()
	})
	assert.Equal(t, `level=WARN msg="workqueue: reconcile failed; not retried: the queue is shut down" key=default/web err=boom`+"\n",
		stripTime(buf.String()))
}

func TestRunLogsGivingUpAtErrorAndCountsItInGaveUp(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		stop := startRun(q, func(_ context.Context, key string) (Result, error) {
			if key == "bad" {
				return Result{}, Terminal(errors.New("invalid spec"))
			}
			return Result{}, errors.New("unreachable")
		}, RunOptions[string]{MaxRetries: 2})
		q.Add("bad")
		q.Add("flaky")
		time.Sleep(time.Minute)
		stop()
		assert.Equal(t, int64(2), q.GaveUp(), "a terminal error, and the retry cap reached")
	})
	log := stripTime(buf.String())
	assert.Contains(t, log, `level=ERROR msg="workqueue: reconcile failed; giving up until the key is added again" key=bad err="terminal: invalid spec"`)
	assert.Contains(t, log, `level=WARN msg="workqueue: reconcile failed; retrying" key=flaky err=unreachable retry=1`)
	assert.NotContains(t, log, "retry=2", "the same error again is logged at level Debug")
	assert.Contains(t, log, `level=ERROR msg="workqueue: reconcile failed; giving up until the key is added again" key=flaky err="giving up after 2 retries: unreachable"`)
}

func TestGaveUpCountsWhenOnErrorReplacesTheLogToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		var reported lines
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, Terminal(errors.New("no")) },
			RunOptions[string]{OnError: func(key string, err error) { reported.add(key) }})
		q.Add("a")
		q.Add("b")
		synctest.Wait()
		stop()
		assert.Equal(t, int64(2), q.GaveUp())
		assert.ElementsMatch(t, []string{"a", "b"}, reported.get())
	})
}

// stripTime removes the time=... attribute slog's text handler starts
// each line with.
func stripTime(log string) string {
	return timeAttr.ReplaceAllString(log, "")
}

var timeAttr = regexp.MustCompile(`(?m)^time=\S+ `)

// A panic once the queue is shut down is not retried, and its line keeps
// the stack a panic's first line has: the table in docs/07 lists it.
func TestRunLogsAPanicOnceTheQueueIsShutDownWithItsStack(t *testing.T) {
	buf := logTo(t)
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		stop := startRun(q, func(context.Context, string) (Result, error) {
			q.ShutDown()
			panic("nil map")
		}, RunOptions[string]{})
		q.Add("default/web")
		synctest.Wait()
		stop()
	})
	log := stripTime(buf.String())
	assert.True(t, strings.HasPrefix(log, `level=ERROR msg="workqueue: reconcile panicked; not retried: the queue is shut down" key=default/web err="reconcile panicked: nil map" stack=`), log)
	assert.NotContains(t, log, "retry=", "nothing is retried")
}

// A give-up is traced (KindGaveUp) and counted in GaveUp before OnError
// hears of it, and the key is forgotten after: OnError may read GaveUp
// and NumRequeues as they stand at the verdict.
func TestAGiveUpIsTracedAndCountedBeforeOnErrorAndForgottenAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen lines
		var q *Queue[string]
		q = New(Options[string]{Trace: func(e informer.TraceEvent) {
			if e.Kind == KindGaveUp || e.Kind == KindForgotten {
				seen.add("trace " + e.Kind)
			}
		}})
		stop := startRun(q, func(context.Context, string) (Result, error) { return Result{}, errors.New("unreachable") },
			RunOptions[string]{MaxRetries: 1, OnError: func(key string, err error) {
				seen.add(fmt.Sprintf("OnError GaveUp=%d NumRequeues=%d", q.GaveUp(), q.NumRequeues(key)))
			}})
		q.Add("k")
		time.Sleep(time.Minute)
		stop()
		assert.Equal(t, []string{
			"OnError GaveUp=0 NumRequeues=0", // the failure, retried
			"trace gave-up",
			"OnError GaveUp=1 NumRequeues=1", // the give-up: counted, not yet forgotten
			"trace forgotten",
		}, seen.get())
	})
}
