package workqueue

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inChild runs scenario in a child process of this test binary (this
// test alone) and returns its combined output and error: a panic on a
// worker goroutine, or a fatal stack overflow, ends the whole process,
// which a test in this process could not report.
func inChild(t *testing.T, scenario func(t *testing.T)) (string, error) {
	t.Helper()
	if os.Getenv("TYPEDNIL_CHILD") == t.Name() {
		scenario(t)
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TYPEDNIL_CHILD="+t.Name())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Scenario: a reconcile has a typed nil (var err *url.Error; ...) and
// panics with it instead of returning it:
// `if err != nil { panic(err) }` on the classic typed-nil mistake.
// reconcileRecovered recovers it into a *PanicError whose Err is the
// typed nil; process then calls keepsRetrying (errors.As), which calls
// (*url.Error)(nil).Unwrap, a nil dereference on the worker goroutine,
// outside any recover.
//
// Run's doc: "a panic: recovered, reported to OnError as a *PanicError,
// then retried like an error; an error holding a typed nil ..., itself or
// wrapped, marked or joined, is an error that says so, with the same mark,
// not a crash".
func TestAReconcileThatPanicsWithATypedNilErrorIsRecoveredNotACrash(t *testing.T) {
	out, err := inChild(t, func(t *testing.T) {
		q := New(Options[string]{})
		defer q.ShutDown()
		got := firstReported(t, q, func(context.Context, string) (Result, error) {
			var typedNil *url.Error
			panic(typedNil)
		}, nil)
		var p *PanicError
		assert.True(t, errors.As(got, &p), "OnError got %v", got)
	})
	require.NoError(t, err, "the process running Run crashed:\n%s", out)
}

// A reconcile returns errors.Join of a typed nil whose type has an Unwrap
// method (a nil *url.Error) and a Terminal error. Looking for the mark,
// errors.As calls (*url.Error)(nil).Unwrap before it reaches the Terminal,
// which panics: Run cannot see the mark, so the key fails (and is
// retried) with an error that says it could not be read; it was once
// recovered as a panic of the reconcile instead. Run's doc: an error that
// panics when read is replaced "with the Terminal or KeepRetrying mark Run
// could still see: a failure of its key, not a crash".
func TestAJoinedTypedNilWhoseUnwrapPanicsIsAFailureNotAPanic(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	got := firstReported(t, q, func(context.Context, string) (Result, error) {
		var typedNil *url.Error
		return Result{}, errors.Join(typedNil, Terminal(errors.New("web's spec is invalid")))
	}, nil)
	assert.ErrorContains(t, got, "panics when read", "the error says it could not be read")
	var p *PanicError
	assert.False(t, errors.As(got, &p), "not blamed on a panic of the reconcile: OnError got %q", got)
}

// typedNilPanicGate panics on its first Hold with a typed nil error (the
// classic `if err != nil { panic(err) }` on a nil *url.Error), then lets
// every key pass.
type typedNilPanicGate struct {
	mu    sync.Mutex
	asked int
}

func (g *typedNilPanicGate) Hold(string) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	g.asked++
	first := g.asked == 1
	g.mu.Unlock()
	if first {
		var typedNil *url.Error
		panic(typedNil)
	}
	return false, nil, 0
}

// Scenario: a Gate's Hold panics with a typed nil error (a nil
// *url.Error, whose Unwrap dereferences it). The *PanicError Run makes of
// it must not hold the typed nil (errors.As would call its Unwrap while
// Run settles the failure, a panic of the library's own, blamed on a
// reconcile that never ran).
//
// Run's doc: "A Hold that panics is a failure of its key, retried like a
// reconcile's panic"; TestAGateWhoseHoldPanicsFailsTheKeyAndItIsRetried
// checks, with a string panic, that OnError's error says "the Gate's
// Hold panicked" and not "reconcile".
func TestAGateWhoseHoldPanicsWithATypedNilIsReportedAsTheGatesPanic(t *testing.T) {
	q := New(Options[string]{})
	defer q.ShutDown()
	got := firstReported(t, q, func(context.Context, string) (Result, error) { return Result{}, nil }, &typedNilPanicGate{})
	var p *PanicError
	assert.True(t, errors.As(got, &p), "OnError got %q, not a *PanicError", got)
	assert.NotContains(t, got.Error(), "reconcile", "the reconcile never ran")
}

// firstReported runs reconcile over q (with the gate, if any) until
// OnError receives its first error, and returns it.
func firstReported(t *testing.T, q *Queue[string], reconcile ReconcileFunc[string], gate Gate[string]) error {
	t.Helper()
	reported := make(chan error, 1)
	stop := startRun(q, reconcile, RunOptions[string]{Gate: gate, OnError: func(_ string, err error) {
		select {
		case reported <- err:
		default:
		}
	}})
	defer stop()
	q.Add("k")
	select {
	case err := <-reported:
		return err
	case <-time.After(time.Minute):
		t.Fatal("OnError received nothing within a minute")
		return nil
	}
}
