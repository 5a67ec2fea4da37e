package workqueue

// GivenUp reports whether err, as RunOptions.OnError received it, is one
// Run gave its key up on (traced KindGaveUp, counted in Queue.GaveUp,
// the key forgotten): a returned error marked Terminal, or the
// *RetryLimitError Run made for a key that failed once more after
// MaxRetries. Any other error OnError receives is retried with backoff,
// a panic included, whatever its value, and a *RetryLimitError a
// reconcile returned itself (TestGivenUpSaysWhatRunDidWithEachFailure);
// though not one Run made and a reconcile returned again (one an inner
// queue's OnError received, passed on), which GivenUp cannot tell from
// the give-up it was.
//
// Run's rule is not errors.As: a Terminal mark inside a panic's value
// does not count, while one around a recovered panic does; so an OnError
// that says whether a key will be retried asks GivenUp.
func GivenUp(err error) bool {
	if e, ok := err.(*RetryLimitError); ok && e.run {
		return true
	}
	return isTerminal(err)
}
