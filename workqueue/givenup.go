package workqueue

// GivenUp reports whether err, as RunOptions.OnError received it, is one
// Run gave its key up on (traced KindGaveUp, counted in Queue.GaveUp,
// the key forgotten): a returned error marked Terminal, or the
// *RetryLimitError of a key that failed once more after MaxRetries.
// Any other error OnError receives is retried with backoff, a panic
// included, whatever its value
// (TestGivenUpSaysWhatRunDidWithEachFailure).
//
// Run's rule is not errors.As: a Terminal mark inside a panic's value
// does not count, while one around a recovered panic does; so an OnError
// that says whether a key will be retried asks GivenUp.
func GivenUp(err error) bool {
	if _, ok := err.(*RetryLimitError); ok {
		return true
	}
	return isTerminal(err)
}
