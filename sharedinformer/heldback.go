package sharedinformer

import (
	"sync"
	"time"
)

// A client is throttled when, within one throttleWindow, its requests
// were held back by the rate limiter (at least one of them waiting) for
// throttleShare of the window or more, and at least one request waited
// waitedAtLeast or more. Then it is reported at once, and
// at most once every throttleWindow. Ten percent of ten seconds is one second spent
// waiting: a burst that held requests back for a second is worth a line
// in the log; a few requests spaced out by a few milliseconds are not.
const (
	throttleWindow = 10 * time.Second
	throttleShare  = 0.1
)

// A wait shorter than waitedAtLeast is a request that found a token: the
// limiter's own bookkeeping, not throttling.
const waitedAtLeast = time.Millisecond

// heldBack measures the share of time requests spend waiting for a rate
// limiter: the union of the intervals during which at least one request
// was waiting, so that four requests waiting side by side for one second
// count one second, not four.
type heldBack struct {
	mu         sync.Mutex
	w          heldWindow // the current window; guarded by mu
	lastReport time.Time  // when the last report was made; zero before the first; guarded by mu
}

// heldWindow is one window's account.
type heldWindow struct {
	start        time.Time     // when the window began; zero before the first request
	busy         time.Duration // held-back time in intervals already closed
	waiting      int           // requests inside Wait now
	since        time.Time     // when the interval open now began (if waiting > 0)
	requests     int           // requests that entered Wait
	waited       int           // of them, those that waited waitedAtLeast or more
	longest      time.Duration
	reported     bool          // a report of this window was made
	reportedBusy time.Duration // its held-back time then: it is reported again only for as much more
}

// throttleReport is what a warning says: in the span since its window
// began, the share of time requests were held back, how many requests
// there were, how many waited, and the longest wait; and, for a window
// reported after it ended, how long ago that was.
type throttleReport struct {
	span     time.Duration
	share    float64
	requests int
	waited   int
	longest  time.Duration
	ago      time.Duration
}

// enter records a request that starts waiting at now. It returns a report
// if the window that now ends was throttled and not yet reported.
func (h *heldBack) enter(now time.Time) (throttleReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	report, ok := h.roll(now)
	if h.w.waiting == 0 {
		h.w.since = now
	}
	h.w.waiting++
	h.w.requests++
	return report, ok
}

// leave records that the request that entered at start stopped waiting at
// end, and returns a report if its window is throttled and no report was
// made in the last throttleWindow.
func (h *heldBack) leave(start, end time.Time) (throttleReport, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := end.Sub(start); d >= waitedAtLeast {
		h.w.waited++
		h.w.longest = max(h.w.longest, d)
	}
	report, ok := h.roll(end)
	if d := end.Sub(start); d >= waitedAtLeast && start.Before(h.w.start) { // a wait the window rolled under: in the new one too
		h.w.waited++
		h.w.longest = max(h.w.longest, d)
	}
	if ok {
		h.close(end)
		return report, true
	}
	h.close(end)
	return h.check(end, end)
}

// close ends one request's wait at now.
func (h *heldBack) close(now time.Time) {
	h.w.waiting--
	if h.w.waiting == 0 {
		h.w.busy += now.Sub(h.w.since)
	}
}

// roll begins a new window at now if the current one is over, and first
// checks the window that ends, at its end: the interval still open
// counts up to there, so a single wait longer than the window is
// reported when it ends, and a report never covers more than one window
// (a window left unreported for want of 10 s since the last report is
// reported at the next request, with how long ago it ended, if that
// request comes within a window of its end or a request is still
// waiting, the wait that makes the window throttled; later than that,
// and with nothing waiting, a warning would only confuse, and the
// histogram has every wait). A request still waiting was held back
// since the window's end, and is in the new window, which begins there,
// or a window before now if that is later: so a wait that began just
// before a window's end and outlasted it by far is warned of too
// (TestAMinutesWaitBegunAtTheEndOfAWindowIsWarned,
// TestAMinutesWaitBegunAtTheEndOfAWindowWarnedEarlyIsWarned).
func (h *heldBack) roll(now time.Time) (throttleReport, bool) {
	if !h.w.start.IsZero() && now.Sub(h.w.start) < throttleWindow {
		return throttleReport{}, false
	}
	var report throttleReport
	var ok bool
	if end := h.w.start.Add(throttleWindow); !h.w.start.IsZero() && (h.w.waiting > 0 || now.Sub(end) < throttleWindow) {
		report, ok = h.check(end, now)
		report.ago = now.Sub(end)
	}
	start := now
	if h.w.waiting > 0 && !h.w.start.IsZero() { // held back all along since the window's end: a wait outlasting it
		start = h.w.start.Add(throttleWindow)
		if later := now.Add(-throttleWindow); later.After(start) {
			start = later
		}
	}
	h.w = heldWindow{start: start, waiting: h.w.waiting, since: start}
	return report, ok
}

// check returns a report of the current window up to at if requests
// were held back for throttleShare of a window in it, at least one of
// them for waitedAtLeast or more, and the last report was made a window
// or more before now, the time of this one. (A report is dated when it
// is made, not by the end of the window it covers: a window reported
// late, when a long wait ended, is followed by no other report within
// a window: TestAWindowWarnedLateIsFollowedByNoWarningWithinTenSeconds.)
// A window's throttling is reported once: one reported while it ran is
// not reported again when it ends, though that may be a window after the
// report (TestAWindowAlreadyWarnedIsNotWarnedAgainWhenItEnds), unless its
// requests were held back a tenth of a window more since that report (a
// wait that began after it and outlasted the window:
// TestALongWaitInAWindowWarnedEarlyIsWarnedWhenItEnds).
func (h *heldBack) check(at, now time.Time) (throttleReport, bool) {
	w := &h.w
	busy := w.busy
	if w.waiting > 0 && at.After(w.since) {
		busy += at.Sub(w.since)
	}
	threshold := time.Duration(throttleShare * float64(throttleWindow))
	if busy < threshold || w.waited == 0 || w.reported && busy-w.reportedBusy < threshold {
		return throttleReport{}, false
	}
	if !h.lastReport.IsZero() && now.Sub(h.lastReport) < throttleWindow {
		return throttleReport{}, false
	}
	h.lastReport = now
	w.reported, w.reportedBusy = true, busy
	span := at.Sub(w.start)
	return throttleReport{span: span, share: float64(busy) / float64(span), requests: w.requests, waited: w.waited, longest: w.longest}, true
}
