package workqueue

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/informer"
)

// For each kind of failure, GivenUp(err) of the error OnError received
// says what Run did: true exactly when Run traced KindGaveUp for it.
// errors.As for *TerminalError gets two of them wrong (a panic with a
// Terminal value, retried; a key past MaxRetries, given up).
func TestGivenUpSaysWhatRunDidWithEachFailure(t *testing.T) {
	terminal := Terminal(errors.New("spec.replicas is negative"))
	for _, c := range []struct {
		name string
		fail func() error // the first attempt's failure: returned, or panicked
		want bool
	}{
		{"a plain error", func() error { return errors.New("timeout") }, false},
		{"a Terminal error", func() error { return terminal }, true},
		{"a Terminal error wrapped", func() error { return fmt.Errorf("validating: %w", terminal) }, true},
		{"a panic with a Terminal error", func() error { panic(terminal) }, false},
		{"a Terminal error around a recovered panic", func() error { return Terminal(NewPanicError("index out of range")) }, true},
		{"a KeepRetrying error", func() error { return KeepRetrying(errors.New("webhook hiccup")) }, false},
		{"a plain error past MaxRetries", nil, true},
		{"a RetryLimitError returned", func() error { return &RetryLimitError{Retries: 3, Err: errors.New("the inner queue gave up")} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var kinds lines
				q := New(Options[string]{Trace: func(e informer.TraceEvent) {
					switch e.Kind {
					case KindFailed, KindPanicked, KindGaveUp:
						kinds.add(e.Kind)
					}
				}})
				attempts := 0
				var said []bool
				opts := RunOptions[string]{OnError: func(_ string, err error) { said = append(said, GivenUp(err)) }}
				if c.fail == nil {
					opts.MaxRetries = 1 // the second failure is past it
				}
				stop := startRun(q, func(context.Context, string) (Result, error) {
					attempts++
					if c.fail == nil {
						if attempts <= 2 {
							return Result{}, errors.New("timeout")
						}
						return Result{}, nil
					}
					if attempts == 1 {
						return Result{}, c.fail()
					}
					return Result{}, nil
				}, opts)
				defer stop()
				q.Add("a")
				time.Sleep(time.Minute)
				synctest.Wait()
				got := kinds.get()
				if !assert.NotEmpty(t, said, "OnError was told") {
					return
				}
				assert.Equal(t, c.want, said[len(said)-1], "GivenUp of the last failure's error")
				assert.Equal(t, c.want, got[len(got)-1] == KindGaveUp, "Run's trace of it: %v", got)
			})
		})
	}
}
