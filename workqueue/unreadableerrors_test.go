package workqueue

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"fmt"
	"sync/atomic"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errList is an error whose dynamic type cannot be compared with ==, as
// k8s.io/apimachinery's utilerrors.Aggregate (an []error) and
// field.ErrorList.ToAggregate are: a common error to panic with.
type errList []error

func (l errList) Error() string {
	s := make([]string, len(l))
	for i, err := range l {
		s[i] = err.Error()
	}
	return strings.Join(s, ", ")
}

// Scenario: a reconcile panics with an error of an uncomparable type
// (panic(utilerrors.NewAggregate(errs)), say). reconcileRecovered's
// deferred recover calls NewPanicError, which since c77c8b4 keeps the
// value as Err only if readable(err) == err: comparing two interfaces
// holding the same uncomparable type panics ("comparing uncomparable
// type"), inside the deferred function, after recover: the panic leaves
// the worker goroutine and ends the process. Before c77c8b4 (e.Err, _ =
// v.(error)) it was a *PanicError like any other.
//
// Run's doc: "a panic: recovered, reported to OnError as a *PanicError,
// then retried like an error"; "so that one bad key can neither crash the
// process nor stop a worker" (reconcileRecovered).
func TestAReconcileThatPanicsWithAnUncomparableErrorIsRecoveredNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		got := firstReported(t, q, func(context.Context, string) (Result, error) {
			panic(errList{errors.New("spec.replicas: must be positive"), errors.New("spec.image: required")})
		}, nil)
		var p *PanicError
		assert.True(t, errors.As(got, &p), "OnError got %v", got)
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// uncomparablePanicGate panics on its first Hold with an error of an
// uncomparable type, then lets every key pass.
type uncomparablePanicGate struct {
	mu    sync.Mutex
	asked int
}

func (g *uncomparablePanicGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	g.asked++
	first := g.asked == 1
	g.mu.Unlock()
	if first {
		panic(errList{errors.New("index lookup failed")})
	}
	return false, nil, 0
}

// The same for a Gate's Hold: holds.ask's deferred recover calls
// NewPanicError too. Run's doc: "A Hold that panics is a failure of its
// key, retried like a reconcile's panic".
func TestAGateWhoseHoldPanicsWithAnUncomparableErrorIsAFailureNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		got := firstReported(t, q, func(context.Context, string) (Result, error) { return Result{}, nil }, &uncomparablePanicGate{})
		assert.Contains(t, got.Error(), "the Gate's Hold panicked")
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// codeErr is an error with an Is method written for its own type only: it
// asserts target's type without checking (a mistake, but one that never
// shows while the error is compared with its own sentinels).
type codeErr struct{ code int }

func (e *codeErr) Error() string { return "code " + string(rune('0'+e.code)) }

func (e *codeErr) Is(target error) bool { return e.code == target.(*codeErr).code }

// Scenario: a reconcile returns a *codeErr, readable in every way process
// reads it while ctx runs (its text; its marks: no Is method is called
// by errors.As). readable also calls errors.Is(err, context.Canceled),
// which process only does once ctx is done: the user's Is panics on that
// foreign target, and the error is replaced by "workqueue: reconcile
// returned an error (a *workqueue.codeErr) that panics when read (a typed
// nil inside?)". OnError no longer finds the reconcile's error
// (errors.As), nor its text.
//
// Run's doc: "an error that panics when read (a typed nil ...) is
// replaced"; OnError "receives every error reconcile returns". This one
// never panics where Run reads it before ctx is done.
func TestAReadableErrorWhoseIsMethodRejectsForeignTargetsReachesOnErrorUnchanged(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	got := firstReported(t, q, func(context.Context, string) (Result, error) {
		return Result{}, &codeErr{code: 4}
	}, nil)
	var ce *codeErr
	assert.True(t, errors.As(got, &ce), "OnError got %q, not the reconcile's *codeErr", got)
}

// Scenario: Run's ctx ends while a reconcile is in flight; the reconcile
// returns its ctx's error joined with a typed nil it also had (errors.Join
// of ctx.Err() and a nil *url.Error). Run can see that the error wraps
// ctx.Err() (errors.Is finds context.Canceled before it reaches the typed
// nil) but its text panics, so readable replaces it with an error that
// wraps nothing, and process then takes it for a failure: OnError, and
// a retry with backoff (dropped if q shuts down before it is due).
//
// Run's doc: "ctx.Err() (or an error wrapping it) once ctx is done: not a
// failure; the key is added again, unreported and uncounted, so that
// whoever runs the queue next reconciles it".
func TestAnUnreadableErrorWrappingCtxErrOnceCtxIsDoneIsNotAFailure(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	var mu sync.Mutex
	var reported []error
	started := make(chan struct{})
	stop := startRun(q, func(ctx context.Context, _ string) (Result, error) {
		close(started)
		<-ctx.Done()
		var typedNil *url.Error
		return Result{}, errors.Join(ctx.Err(), typedNil)
	}, RunOptions[string]{OnError: func(_ string, err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	q.Add("k")
	<-started
	stop()
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, reported, "a reconcile ended by Run's ctx, its error wrapping ctx.Err(), was reported as a failure")
	assert.Equal(t, 1, q.Len(), "the key is added again at once, for whoever runs the queue next")
}

// Scenario: Run's ctx ends (the process shuts down) while a reconcile is
// in flight, and the reconcile then panics with a *codeErr — an error
// readable in every way (its text is fine, it is no typed nil) whose Is
// method asserts its own target type. reconcileRecovered's deferred
// recover calls newPanicError, whose canRead probes with
// context.Background(): no errors.Is is tried, so the *codeErr is kept as
// the PanicError's Err. process then asks ctx.Err() != nil &&
// errors.Is(err, ctx.Err()) — ctx is done — and errors.Is unwraps the
// PanicError to the *codeErr and calls its Is(context.Canceled), which
// panics on the worker goroutine, outside any recover: the process dies.
// (A *codeErr returned, not panicked, is probed by readable(ctx, err)
// with ctx and replaced: no crash.)
//
// Run's doc: "a panic: recovered, reported to OnError as a *PanicError,
// then retried like an error"; reconcileRecovered: "so that one bad key
// can neither crash the process nor stop a worker"; readable: "the marks
// and causes process looks for (the end of ctx, once ctx is done)".
func TestAReconcileThatPanicsAfterCtxEndsWithAnErrorWhoseIsRejectsForeignTargetsIsNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		started := make(chan struct{})
		var once sync.Once
		stop := startRun(q, func(ctx context.Context, _ string) (Result, error) {
			once.Do(func() { close(started) })
			<-ctx.Done()
			panic(&codeErr{code: 4})
		}, RunOptions[string]{OnError: func(string, error) {}})
		q.Add("k")
		<-started
		stop()
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// selfBomb is an error whose Error method panics with itself: a bug in a
// user's error type (an Error that panics with its receiver, or with
// another value of a type whose Error panics too). Its first panic,
// recovered by fmt, is printed by fmt with %v, which panics again inside
// fmt's own recover: fmt re-panics ("Nested panics").
type selfBomb struct{}

func (selfBomb) Error() string { panic(selfBomb{}) }

// Scenario: a reconcile panics with a selfBomb. reconcileRecovered's
// deferred recover calls NewPanicError, whose fmt.Sprint(v) calls
// v.Error(), which panics; fmt recovers that and prints the panic value
// (the selfBomb again) with %v, which panics once more; fmt re-panics.
// The panic leaves the deferred function after recover, on the worker's
// goroutine: the process dies. (canRead, which NewPanicError calls after,
// would have probed Error under recover: fmt.Sprint comes first and is
// not.)
//
// Run's doc: "a panic: recovered, reported to OnError as a *PanicError,
// then retried like an error"; reconcileRecovered: "so that one bad key
// can neither crash the process nor stop a worker".
func TestAReconcileThatPanicsWithAnErrorWhoseErrorPanicsWithItselfIsNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		got := firstReported(t, q, func(context.Context, string) (Result, error) {
			panic(selfBomb{})
		}, nil)
		_, ok := errors.AsType[*PanicError](got)
		require.True(t, ok, "OnError got %T, not a *PanicError", got)
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// Scenario: a reconcile returns a selfBomb. canRead finds that its Error
// panics, and readable builds the replacement with
// fmt.Errorf("... panics when read ...: %v", err, why), why being the
// recovered value — the selfBomb — which fmt prints with %v and which
// panics twice: fmt re-panics inside reconcileRecovered, whose deferred
// recover then calls NewPanicError(selfBomb{}), whose fmt.Sprint panics
// the same way inside the deferred function: the process dies.
//
// Run's doc: "an error that panics when read ... is replaced by one that
// says so ...: a failure of its key, not a crash"; docs/07's table, "an
// error that panics when read ... replaced by an error that says so ...
// not a crash".
func TestAReconcileThatReturnsAnErrorWhoseErrorPanicsWithItselfIsNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		got := firstReported(t, q, func(context.Context, string) (Result, error) {
			return Result{}, selfBomb{}
		}, nil)
		require.Error(t, got)
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// Scenario: a wrapper of a ReconcileFunc recovers a panic itself and
// returns workqueue.NewPanicError(v), as docs/07 tells it to ("a panic
// ... reported as a *PanicError (workqueue.NewPanicError makes the same
// of a panic a wrapper recovers itself)") and as package sharding's
// Reconciler does whenever a drain waits under the key. Run's ctx ends
// while the reconcile is in flight, and it then panics with a *codeErr
// (readable, but its Is asserts its own target type). NewPanicError's
// canRead probes with context.Background(), so the *codeErr is kept as
// Err; Run's readable(ctx, err) then probes errors.Is(err,
// context.Canceled) — ctx is done — which panics inside the *codeErr,
// and replaces the whole *PanicError by "workqueue: reconcile returned an
// error (a *workqueue.PanicError) that panics when read": OnError gets no
// *PanicError (and the default log no stack, at Warn). The same panic
// not recovered by the wrapper reaches OnError as a *PanicError
// (TestAReconcileThatPanicsAfterCtxEndsWithAnErrorWhoseIsRejectsForeignTargetsIsNotACrash's
// scene): NewPanicError does not make "the same" as Run makes.
//
// Run's doc: "a panic: recovered, reported to OnError as a *PanicError";
// NewPanicError's doc: "the *PanicError Run makes of v ... A wrapper of a
// ReconcileFunc that recovers panics itself ... makes its *PanicError
// with it, as Run would".
func TestAPanicRecoveredByAWrapperAfterCtxEndsReachesOnErrorAsAPanicError(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		name := map[bool]string{false: "Run recovers", true: "the wrapper recovers"}[wrapped]
		t.Run(name, func(t *testing.T) {
			q := New(Options[string]{})
			defer q.ShutDown()
			var mu sync.Mutex
			var reported []error
			started := make(chan struct{})
			var once sync.Once
			inner := func(ctx context.Context, _ string) (Result, error) {
				once.Do(func() { close(started) })
				<-ctx.Done()
				panic(&codeErr{code: 4})
			}
			reconcile := inner
			if wrapped {
				reconcile = func(ctx context.Context, key string) (res Result, err error) {
					defer func() {
						if v := recover(); v != nil {
							res, err = Result{}, NewPanicError(v)
						}
					}()
					return inner(ctx, key)
				}
			}
			stop := startRun(q, reconcile, RunOptions[string]{OnError: func(_ string, err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			}})
			q.Add("k")
			<-started
			stop()
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, reported, 1)
			_, ok := errors.AsType[*PanicError](reported[0])
			require.True(t, ok, "%s: OnError got %T (%q), not a *PanicError", name, reported[0], reported[0])
		})
	}
}

// formatBomb reads fine through Error, but its Format (fmt's %+v, which
// the default log's slog text handler uses for an error attribute) panics
// with a selfBomb, which fmt cannot print in turn: fmt re-panics.
type formatBomb struct{}

func (formatBomb) Error() string { return "formatBomb" }

func (formatBomb) Format(fmt.State, rune) { panic(selfBomb{}) }

// Scenario: the classic typed-nil mistake, with the API's own error type:
//
//	var statusErr *apierrors.StatusError // set on some path, nil on this one
//	return Result{}, fmt.Errorf("update ns/cm: %w", statusErr)
//
// fmt prints the nil pointer as "<nil>", so the wrapper's Error reads
// fine; errors.As for Run's marks walks to the typed nil and calls no
// method on it (*StatusError has no As nor Unwrap): canRead says
// readable, and readable hands the error on unchanged. With no OnError,
// process calls the default log, whose retried asks
// apierrors.IsConflict(err): errors.As stops at the typed nil (it is an
// APIStatus) and calls its Status(), a nil dereference on the worker's
// goroutine, outside any recover: the process dies. The same with a panic
// of that error (NewPanicError keeps it as Err; IsConflict sees through
// PanicError.Unwrap).
//
// Promise broken: Run's doc, "an error that panics when read (a typed nil
// ..., itself or wrapped) is replaced by one that says so ...: a failure
// of its key, not a crash"; reconcileRecovered, "so that one bad key can
// neither crash the process nor stop a worker". canRead probes only the
// reads process makes, not the default log's (IsConflict's Status()).
func TestAWrappedTypedNilStatusErrorWithTheDefaultLogIsNotACrash(t *testing.T) {
	for _, panics := range []bool{false, true} {
		name := map[bool]string{false: "returned", true: "panicked"}[panics]
		t.Run(name, func(t *testing.T) {
			out, err := inChild(t, func(t *testing.T) {
				q := New(Options[string]{})
				defer q.ShutDown()
				var calls atomic.Int32
				retried := make(chan struct{})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					Run(ctx, q, func(context.Context, string) (Result, error) {
						if calls.Add(1) == 2 {
							close(retried)
							return Result{}, nil
						}
						var statusErr *apierrors.StatusError
						err := fmt.Errorf("update ns/cm: %w", statusErr)
						if panics {
							panic(err)
						}
						return Result{}, err
					}, RunOptions[string]{}) // no OnError: the default log
				}()
				q.Add("k")
				select {
				case <-retried:
				case <-time.After(time.Minute):
					t.Fatal("the key was not retried within a minute")
				}
				cancel()
				<-done
			})
			require.NoError(t, err, "the process running Run crashed:\n%s", out)
		})
	}
}

// Scenario: a reconcile returns (or panics with) an error whose Error
// reads fine — canRead passes it, readable hands it on, NewPanicError
// keeps it as Err and prints Value with printed() — but whose printing by
// the default log panics: log.retried hands it to slog.Default() as the
// "err" attribute, and the default handler formats it with fmt.Sprintf("%+v")
// (Format first); slog recovers that panic and prints its value with
// fmt.Sprintf("!PANIC: %v"), which re-panics on the selfBomb, under no
// recover. The panic leaves process on the worker's goroutine: the
// process dies. (A panicked value reaches slog as a *PanicError, whose
// Error is safe: only the returned case crashes, so only it is tested.)
//
// Promise broken: the commit's "printing a panic never panics" / Run's doc
// "a failure of its key, not a crash", for the default OnError (the zero
// RunOptions): printed() guards NewPanicError's and readable's own
// printing, not the default log's.
func TestAnErrorThatPanicsWhenTheDefaultLogPrintsItIsNotACrash(t *testing.T) {
	for name, bomb := range map[string]error{"Format": formatBomb{}} {
		t.Run(name, func(t *testing.T) {
			out, err := inChild(t, func(t *testing.T) {
				q := New(Options[string]{})
				defer q.ShutDown()
				var calls atomic.Int32
				retried := make(chan struct{})
				stop := startRun(q, func(context.Context, string) (Result, error) {
					if calls.Add(1) == 2 {
						close(retried)
						return Result{}, nil
					}
					return Result{}, bomb
				}, RunOptions[string]{}) // no OnError: the default log
				defer stop()
				q.Add("k")
				select {
				case <-retried:
				case <-time.After(time.Minute):
					t.Fatal("the key was not retried within a minute")
				}
			})
			require.NoError(t, err, "the process running Run crashed:\n%s", out)
		})
	}
}

// The same formatBomb, with an OnError that reads what it is given (any
// OnError that logs calls err.Error()) and MaxRetries 1: the key fails
// twice and is given up, and Run hands OnError a *RetryLimitError, whose
// Error is fmt.Sprintf("giving up after %d retries: %v", ..., e.Err):
// Format again, the same re-panic, now inside Run's own error's Error, on
// the worker's goroutine. The reconcile's error reads fine; the error Run
// made of it does not. Same promise, with an OnError.
func TestTheRetryLimitErrorRunMakesOfAReadableErrorReadsWithoutACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		read := make(chan string, 4)
		stop := startRun(q, func(context.Context, string) (Result, error) {
			return Result{}, formatBomb{}
		}, RunOptions[string]{MaxRetries: 1, OnError: func(_ string, err error) {
			read <- err.Error()
		}})
		defer stop()
		q.Add("k")
		for range 2 {
			select {
			case <-read:
			case <-time.After(time.Minute):
				t.Fatal("OnError was not called twice within a minute")
			}
		}
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}
