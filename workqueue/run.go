package workqueue

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/listwatch/informer/internal/nilcheck"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ReconcileFunc does the work for one key. It reads the object through a
// lister (the informer's cache, never the API server), compares what is
// with what should be, and writes the difference to the API server.
//
// It is level-triggered: it receives a key, not the change that made it
// dirty, and must work from the current state alone, because changes
// coalesce while a key waits, and some are never seen at all.
//
// Return (Result{}, nil) when the key needs nothing more; an error to have
// it retried with backoff, or Terminal(err) when no retry can help; a
// Result with RequeueAfter to look again later. When both an error and a
// Result are returned, the error wins. Return soon after ctx is done.
type ReconcileFunc[K comparable] func(ctx context.Context, key K) (Result, error)

// RunOptions configures [Run]. The zero value is valid: one worker,
// retries without limit, errors logged through slog.
type RunOptions[K comparable] struct {
	// Workers is how many reconciles run at once, one goroutine each: the
	// first operator knob, controller-runtime's MaxConcurrentReconciles
	// (the workers argument of client-go's sample-controller). A key is
	// still never reconciled by two workers at once. Default 1, also for
	// values below 1.
	Workers int

	// MaxRetries, when positive, caps the retries of one key: a key that
	// fails again after that many retries is given up on as if its error
	// were terminal (OnError receives a *RetryLimitError), unless the
	// error is marked KeepRetrying. Its next change enqueues it again,
	// with a fresh count, as does a retry or RequeueAfter scheduled
	// before it was given up. Default 0: no cap.
	MaxRetries int

	// OnError receives every error reconcile returns and every panic it
	// raises (as a *[PanicError]), on the worker's goroutine, before the
	// key is requeued, or forgotten when it is given up on; but not the
	// end of ctx (ctx.Err(), or an error wrapping it, once ctx is done),
	// which is no failure: the key is added again, and nothing reported
	// or logged (TestAnErrorOfTheContextsEndIsNeitherReportedNorLoggedNorCounted). Either way
	// [Queue.GaveUp] counts the keys given up on, a give-up already when
	// OnError hears of it.
	//
	// Default: logged through slog.Default(), with the fields key and err,
	// saying what happens next:
	//
	//   - a retry, at level Warn, with the fields retry (its number) and
	//     delay ("workqueue: reconcile failed; retrying"); at level Info
	//     when the error is a 409 Conflict (the object changed since the
	//     cache read it: normal, and the retry reads the newer state);
	//     at level Error, with the field stack, when reconcile panicked;
	//   - the same key failing again with the same error text, at level
	//     Debug ("... again, as before; retrying"): a key blocked for one
	//     reason is reported once, not on every retry;
	//   - the end of it, at level Info ("workqueue: reconciled after
	//     failing; no longer retried");
	//   - giving up, at level Error, every time ("workqueue: reconcile
	//     failed; giving up until the key is added again").
	OnError func(key K, err error)

	// Gate, when set, is asked before each reconcile whether the key must
	// wait (see [Gate]); a held key is let go and added again later, and
	// other keys go on. Default nil: no key is held.
	Gate Gate[K]
}

// Run runs opts.Workers workers over q, each a loop of Get, reconcile,
// Done, and settles every reconcile's outcome:
//
//   - (Result{}, nil): Forget(key), so its next failure starts from the
//     shortest delay;
//   - RequeueAfter d > 0 and no error: Forget(key), then AddAfter(key, d);
//   - an error: OnError, then AddRateLimited(key), a retry with backoff;
//   - a panic: recovered, reported to OnError as a *PanicError, then
//     retried like an error, whatever its value: one with a Terminal
//     error is not given up on
//     (TestAReconcileThatPanicsWithATerminalErrorIsRetriedLikeAnyPanic),
//     one with a KeepRetrying error is given up on at MaxRetries
//     (TestAReconcileThatPanicsWithAKeepRetryingErrorIsGivenUpOnAtMaxRetries);
//     a mark put around a panic the reconcile recovered itself is a
//     mark it returned
//     (TestAReturnedTerminalErrorWrappingARecoveredPanicIsGivenUpOn);
//     an error that panics when read (a typed
//     nil: a nil pointer in the error interface, which is not == nil,
//     itself or wrapped) is replaced by one that says so, with the
//     Terminal or KeepRetrying mark Run could still see: a failure of
//     its key, not a crash;
//   - a Terminal error, or an error once the key has been retried
//     MaxRetries times (retries of errors marked [KeepRetrying] not
//     counted, nor such an error given up): a KindGaveUp trace event
//     and one more in [Queue.GaveUp], then OnError, then Forget(key),
//     and no requeue
//     (TestAGiveUpIsTracedAndCountedBeforeOnErrorAndForgottenAfter) —
//     the key waits for its next change, or for what was already
//     scheduled for it: a retry or a RequeueAfter of an earlier
//     reconcile still comes, as does an AddAfter of a handler or of
//     OnError (TestARetryScheduledBeforeAGiveUpStillComes,
//     TestAnAddAfterMadeByOnErrorOnAGiveUpIsKept);
//   - ctx.Err() (or an error wrapping it) once ctx is done: not a failure;
//     the key is added again, unreported and uncounted, so that whoever
//     runs the queue next reconciles it.
//
// With opts.Gate, a key the gate holds is not reconciled: the worker
// calls Done and takes the next key, and the key is added again when the
// gate says (see [Gate]). A Hold that panics is a failure of its key,
// retried like a reconcile's panic and traced as one is (KindPanicked,
// or KindGaveUp at MaxRetries), and counted in MetricsSnapshot.Failures
// (TestAGateWhoseHoldPanicsIsCountedAsAFailureOfItsKey). A nil Gate, or a nil pointer held in
// one (the *readyourwrites.Guard of a New whose error was ignored), is no
// gate, as a nil limiter is New's default
// (TestRunTakesANilGuardHeldInItsGateAsNoGate). A held key is not queued meanwhile, so, like a
// delayed key, it is dropped if q shuts down before it is added again.
//
// Once q is shut down, the Add, AddAfter and AddRateLimited above are
// dropped like any other (see ShutDownWithDrain).
//
// Run returns when ctx is done, or when q is shut down and has nothing
// left to hand out, and only after every reconcile in flight has returned
// and its key is Done. ctx is passed to every reconcile, so cancelling it
// also asks the reconciles in flight to stop early.
//
// Run does not shut q down. To stop without losing queued work, call
// q.ShutDownWithDrain while Run is running: the workers finish what is
// queued and Run returns by itself. A key the Gate holds is not queued:
// the drain does not wait for it, and it is dropped when its hold ends
// (TestShutDownWithDrainDropsAKeyAGateHoldsAsItDropsADelayedOne).
//
// A nil q or a nil reconcile is a mistake in the call, not a failure of
// a key: Run panics at once, on the caller's goroutine and before it
// starts a worker, with a message that names it, as http.Handle does for
// a nil handler (TestRunPanicsAtOnceNamingANilQueueOrANilReconcileFunc).
func Run[K comparable](ctx context.Context, q *Queue[K], reconcile ReconcileFunc[K], opts RunOptions[K]) {
	if q == nil {
		panic("workqueue: Run: the queue is nil")
	}
	if reconcile == nil {
		panic("workqueue: Run: the ReconcileFunc is nil")
	}
	onError := opts.OnError
	var log *failureLog[K] // the default log, when there is no OnError
	if onError == nil {
		log = newFailureLog[K]()
	}
	var gate *holds[K]
	if !nilcheck.IsNil(opts.Gate) {
		gate = newHolds(q, opts.Gate)
	}
	var workers sync.WaitGroup
	for range max(opts.Workers, 1) {
		workers.Go(func() {
			for {
				key, err := q.Get(ctx)
				if err != nil {
					return // ctx is done, or the queue is shut down and empty
				}
				admitted, err := gate.admit(ctx, key)
				if err != nil { // the gate panicked: a failure of key
					q.process(ctx, key, func(context.Context, K) (Result, error) { return Result{}, err }, opts.MaxRetries, onError, log)
					continue
				}
				if !admitted {
					q.Done(key)
					continue
				}
				q.process(ctx, key, reconcile, opts.MaxRetries, onError, log)
			}
		})
	}
	workers.Wait()
	gate.end()
}

// process runs one reconcile of key and settles its outcome (see Run).
// Done is always called, even after a panic, last of all, so that an Add
// of a failed key is postponed until the key is released. log, the
// default log (nil when there is an onError), is written once the outcome
// is known, since it says whether the key is retried and when.
func (q *Queue[K]) process(ctx context.Context, key K, reconcile ReconcileFunc[K], maxRetries int, onError func(K, error), log *failureLog[K]) {
	defer q.Done(key)
	result, err := reconcileRecovered(ctx, key, reconcile)
	if err == nil && result.RequeueAfter < 0 {
		err = Terminal(fmt.Errorf("reconcile asked for a negative RequeueAfter (%v)", result.RequeueAfter))
	}
	keep := keepsRetrying(err)
	switch {
	case err == nil:
		log.succeeded(key)
		q.Forget(key)
		if result.RequeueAfter > 0 {
			q.AddAfter(key, result.RequeueAfter)
		}
	case endedBy(ctx, err) && !isPanic(err):
		q.Add(key)
	case isTerminal(err):
		q.giveUp(key, err, onError, log)
	case maxRetries > 0 && !keep && q.ownRequeues(key) >= maxRetries:
		q.giveUp(key, &RetryLimitError{Retries: q.ownRequeues(key), Err: err, run: true}, onError, log)
	default:
		if p, ok := errors.AsType[*PanicError](err); ok {
			q.report(KindPanicked, key, func() string { return p.Value })
		} else {
			q.report(KindFailed, key, err.Error)
		}
		if onError != nil {
			onError(key, err)
		}
		retry, delay, queued := q.addRateLimited(key, keep)
		log.retried(key, err, retry, delay, queued)
	}
}

// giveUp reports err, counts the give-up and forgets key without
// requeueing it.
func (q *Queue[K]) giveUp(key K, err error, onError func(K, error), log *failureLog[K]) {
	q.report(KindGaveUp, key, err.Error)
	q.gaveUp.Add(1)
	if onError != nil {
		onError(key, err)
	}
	log.gaveUp(key, err)
	q.Forget(key)
}

// GaveUp returns how many times [Run] has given up on a key of q, over
// q's life: a Terminal error, or the retry cap reached (a key given up on
// twice counts twice). It is the count behind the
// listwatch_workqueue_gave_up_total metric, kept whether or not the queue
// is traced, so that a test or a health check can read it without a hook.
func (q *Queue[K]) GaveUp() int64 { return q.gaveUp.Load() }

func isPanic(err error) bool {
	_, ok := errors.AsType[*PanicError](err)
	return ok
}

func keepsRetrying(err error) bool { return marked[*KeepRetryingError](err) }

func isTerminal(err error) bool { return marked[*TerminalError](err) }

// marked reports whether err, or an error it wraps, is an M, as
// errors.As would, but not below a *PanicError: a mark is what a
// reconcile returned, and a panic with a marked error is a panic, retried
// like any (TestAReconcileThatPanicsWithATerminalErrorIsRetriedLikeAnyPanic,
// TestAReconcileThatPanicsWithAKeepRetryingErrorIsGivenUpOnAtMaxRetries),
// while a mark put around a recovered panic holds
// (TestAReturnedTerminalErrorWrappingARecoveredPanicIsGivenUpOn).
func marked[M error](err error) bool {
	if err == nil {
		return false
	}
	if _, ok := err.(M); ok {
		return true
	}
	if _, ok := err.(*PanicError); ok {
		return false
	}
	if x, ok := err.(interface{ As(any) bool }); ok {
		var m M
		if x.As(&m) {
			return true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return marked[M](u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if marked[M](e) {
				return true
			}
		}
	}
	return false
}

// reconcileRecovered calls reconcile and turns a panic into a *PanicError,
// and a typed nil error into an error that says so, so that one bad key
// can neither crash the process nor stop a worker.
func reconcileRecovered[K comparable](ctx context.Context, key K, reconcile ReconcileFunc[K]) (result Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = NewPanicError(v)
		}
	}()
	result, err = reconcile(ctx, key)
	return result, readable(ctx, err)
}

// readable returns err if Run can read it: its text, and the marks and
// causes process looks for (the end of ctx, once ctx is done). An error
// that panics when read — a typed nil (a nil pointer in the error
// interface, which is not == nil) whose Error or Unwrap dereferences it,
// bare or inside another — is replaced by one that says so, marked
// Terminal or KeepRetrying if err could be seen to be, and wrapping ctx's
// error if err could be seen to, so that it is settled as err would have
// been instead of crashing the process on a worker's goroutine
// (TestATypedNilErrorFromReconcileIsAFailureOfItsKeyNotACrash,
// TestAnUnreadableErrorWrappingCtxErrOnceCtxIsDoneIsNotAFailure).
func readable(ctx context.Context, err error) error {
	if err == nil || canRead(err, endsOf(ctx)...) {
		return err
	}
	var terminal, keep, ended bool
	_ = panicOf(func() { terminal = isTerminal(err) })
	_ = panicOf(func() { keep = keepsRetrying(err) })
	_ = panicOf(func() { ended = ctx.Err() != nil && errors.Is(err, ctx.Err()) })
	why := panicOf(func() { _ = err.Error() })
	safe := fmt.Errorf("workqueue: reconcile returned an error (a %T) that panics when read (a typed nil inside?): %s", err, printed(why))
	switch {
	case ended:
		return fmt.Errorf("%w (%w)", ctx.Err(), safe)
	case terminal:
		return Terminal(safe)
	case keep:
		return KeepRetrying(safe)
	}
	return safe
}

// canRead reports whether process can read err without a panic: its
// text, its marks, whether it is a 409 (the default log asks), and
// whether it wraps each of ends (the errors of a context that is done)
// (TestAWrappedTypedNilStatusErrorWithTheDefaultLogIsNotACrash).
func canRead(err error, ends ...error) bool {
	return panicOf(func() {
		_ = err.Error()
		_, _, _ = isTerminal(err), keepsRetrying(err), isPanic(err)
		_ = apierrors.IsConflict(err) // what the default log asks (failureLog)
		for _, end := range ends {
			_ = errors.Is(err, end)
		}
	}) == nil
}

// endsOf is ctx's error if it is done: what process asks an error of.
func endsOf(ctx context.Context) []error {
	if err := ctx.Err(); err != nil {
		return []error{err}
	}
	return nil
}

// printed is fmt.Sprint(v), or, when that panics (a value whose Error or
// String panics with a value that panics when printed in turn, which
// fmt would re-panic with), v's type: never a panic.
func printed(v any) (s string) {
	if panicOf(func() { s = fmt.Sprint(v) }) != nil {
		s = fmt.Sprintf("a %T that panics when printed", v)
	}
	return s
}

// endedBy reports whether ctx is done and err wraps its error; an Is
// method that panics on that question answers no (readable already
// checked err under the ctx of its reconcile, which may have ended since).
func endedBy(ctx context.Context, err error) (ended bool) {
	if ctx.Err() == nil {
		return false
	}
	_ = panicOf(func() { ended = errors.Is(err, ctx.Err()) })
	return ended
}

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// report emits a Run event, under q.mu like every other event, so that a
// hook still sees one queue's events one at a time and in order. detail
// builds the event's Detail, called only when there is a hook
// (TestWithNoTraceHookRunBuildsNoDetailOfItsFailureEvents), and before
// q.mu is taken: it may read an error's text, and an Error method may
// call the queue (TestAnErrorsTextIsReadForTheTraceOutsideTheQueuesLock).
func (q *Queue[K]) report(kind string, key K, detail func() string) {
	if q.trace == nil {
		return
	}
	text := detail()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.emit(kind, key, text)
}

// PanicError is what OnError receives when reconcile panicked, or the
// Gate's Hold before it.
type PanicError struct {
	// Value is the panic's value, formatted with fmt.Sprint.
	Value string
	// Err is the panic's value if it was an error, so that errors.Is and
	// errors.As see through the panic (via Unwrap); otherwise nil.
	Err error
	// Stack is the panicking goroutine's stack trace.
	Stack []byte
	// in is what panicked: "" for the reconcile.
	in string
}

// NewPanicError is the *PanicError Run makes of v, a value recovered
// from a panic, called in the goroutine that panicked (its Stack). Err
// holds v only if v is an error Run can read, before its context ends or
// after: not a typed nil
// (TestAReconcileThatPanicsWithATypedNilErrorIsRecoveredNotACrash,
// TestAPanicRecoveredByAWrapperAfterCtxEndsReachesOnErrorAsAPanicError);
// Value is printed so that printing never panics
// (TestAReconcileThatPanicsWithAnErrorWhoseErrorPanicsWithItselfIsNotACrash). A
// wrapper of a ReconcileFunc that recovers panics itself (package
// sharding's Reconciler) makes its *PanicError with it, as Run would.
func NewPanicError(v any) *PanicError {
	e := &PanicError{Value: printed(v), Stack: debug.Stack()}
	if err, ok := v.(error); ok && canRead(err, context.Canceled, context.DeadlineExceeded) {
		e.Err = err // kept for errors.Is and As only if it can be read, whenever Run reads it
	}
	return e
}

// Error says what panicked (the reconcile, or the Gate's Hold), and with
// what.
func (e *PanicError) Error() string {
	if e.in != "" {
		return e.in + " panicked: " + e.Value
	}
	return "reconcile panicked: " + e.Value
}

// Unwrap returns the panic value if it was an error, nil otherwise.
func (e *PanicError) Unwrap() error { return e.Err }
