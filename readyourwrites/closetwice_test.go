package readyourwrites_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
)

// New fails "when Metrics already holds a guard of that Name". A guard
// closed twice (a deferred Close and an early one on an error path, at
// a term's end) gives back, the second time, the Name that the next
// term's guard holds by now: a third guard of that Name is then made
// beside the second, and both write the same series.
func TestClosingAnOldGuardAgainDoesNotFreeTheNameTheNextTermsGuardHolds(t *testing.T) {
	reg := must(metrics.NewRegistry(metrics.NewMemory()))
	opts := readyourwrites.Options{Name: "ctl", Metrics: reg}
	term1 := must(readyourwrites.New(opts))
	term1.Close()
	term2 := must(readyourwrites.New(opts)) // the next term's
	defer term2.Close()
	term1.Close() // again: the deferred Close of term 1
	_, err := readyourwrites.New(opts)
	require.Error(t, err, "a guard named ctl (term 2's) is still open, and another was made beside it")
}
