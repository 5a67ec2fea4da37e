package workqueue

import (
	"fmt"
	"time"
)

// Result is what a reconcile asks of the queue besides its error.
type Result struct {
	// RequeueAfter, when positive, has the key reconciled again after
	// that long, even if nothing changes: for state that moves with time
	// (a certificate about to expire, an expectation that may time out).
	// The key's failure count is reset first (Forget), since this is not
	// a retry. Zero: no requeue. Negative is a mistake, reported as one.
	RequeueAfter time.Duration
}

// Terminal marks err as one a retry cannot fix: an invalid spec, a
// reference to something that will never exist. Returned by a
// reconcile, Run reports it to OnError and the trace (KindGaveUp) and
// forgets the key instead of retrying it (a reconcile that panics with
// one panicked, and is retried like any panic); the key's next change
// enqueues it again (so does a retry or RequeueAfter scheduled before,
// which Run does not take back). Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &TerminalError{Err: err}
}

// TerminalError is an error wrapped by Terminal.
type TerminalError struct{ Err error }

// Error is the wrapped error's text, marked terminal.
func (e *TerminalError) Error() string { return "terminal: " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *TerminalError) Unwrap() error { return e.Err }

// KeepRetrying marks err as one whose key Run retries however many times
// it failed: RunOptions.MaxRetries neither gives it up nor counts its
// retries against the key's own. It is for a key that stands for work
// that must be done while the process runs, and that a retry will get
// done once a fault passes (package sharding's acknowledgement of a
// drain, which no later event may bring back), not for a reconcile's own
// failures. It is retried with the key's backoff like any error (the
// Result is ignored). A Terminal error inside it is still given up on.
// Returned by a reconcile, that is: a reconcile that panics with one
// panicked, and is given up on at MaxRetries like any panic.
// KeepRetrying(nil) is nil.
func KeepRetrying(err error) error {
	if err == nil {
		return nil
	}
	return &KeepRetryingError{Err: err}
}

// KeepRetryingError is an error wrapped by KeepRetrying.
type KeepRetryingError struct{ Err error }

// Error is the wrapped error's text.
func (e *KeepRetryingError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *KeepRetryingError) Unwrap() error { return e.Err }

// RetryLimitError is what OnError receives when a key failed once more
// after RunOptions.MaxRetries retries: Run gives up on it as on a
// terminal error.
type RetryLimitError struct {
	// Retries is how many times the key was retried for failures of its
	// own before this one, the count MaxRetries caps: the retries of
	// errors marked KeepRetrying are not in it
	// (TestARetryLimitErrorCountsOnlyTheKeysOwnRetries).
	Retries int
	// Err is the last failure.
	Err error
	// run is set on the one Run made when it gave up: GivenUp says true
	// of it, not of one a reconcile returned, which Run retries.
	run bool
}

// Error says how many retries were spent and what the last failure was.
func (e *RetryLimitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("giving up after %d retries", e.Retries)
	}
	return fmt.Sprintf("giving up after %d retries: %s", e.Retries, e.Err.Error()) // its text, which Run has read, not a Format of it
}

// Unwrap returns the last failure.
func (e *RetryLimitError) Unwrap() error { return e.Err }
