package sharedinformer

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A window throttled while the last report was under 10 s old is not
// reported then. An hour later, the next request does not report it with
// the hour as its span (a share of 0.06%): a report covers one window,
// held back for a tenth of it or more. (Found by review: it did.)
func TestAReportCoversOneWindowAndAShareOfATenthOrMore(t *testing.T) {
	var h heldBack
	h.enter(at(0))
	r, ok := h.leave(at(0), at(9*time.Second))
	assert.True(t, ok, "9 s of the first window held back")
	_ = r

	// A new window at 10 s: 2 s held back, within 10 s of the last
	// report, so not reported now (at most one every 10 s).
	_, ok = h.enter(at(10 * time.Second))
	assert.False(t, ok)
	_, ok = h.leave(at(10*time.Second), at(12*time.Second))
	assert.False(t, ok, "the last report is 3 s old")

	// An hour of quiet, then one request.
	r, ok = h.enter(at(time.Hour))
	if ok {
		assert.GreaterOrEqual(t, r.share, throttleShare,
			"a warning an hour late says requests were held back %.4f%% of %v", 100*r.share, r.span)
		assert.LessOrEqual(t, r.span, throttleWindow, "a report covers one window, not the hour of quiet after it")
	}
}

// Requests that each found a token within a millisecond, back to back,
// are the limiter's bookkeeping, not throttling: no report, though their
// intervals cover the window. (Found by review: they were reported, in a
// report that said none had waited.)
func TestRequestsThatEachFoundATokenWithinAMillisecondAreNotThrottled(t *testing.T) {
	var h heldBack
	now := at(0)
	var got throttleReport
	var reported bool
	for range 1100 {
		if r, ok := h.enter(now); ok {
			got, reported = r, true
		}
		end := now.Add(waitedAtLeast - time.Microsecond)
		if r, ok := h.leave(now, end); ok {
			got, reported = r, true
		}
		now = end
	}
	assert.False(t, reported, "reported as throttled though waited=%d of %d requests", got.waited, got.requests)
}
