package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
)

// seriesWindow is how long after its last occurrence a repeat still
// joins an Event's series, as client-go's events library does; after it
// the next occurrence is a new Event. seriesFlush is how often, at most,
// a series' count is written to its Event.
const (
	seriesWindow = 6 * time.Minute
	seriesFlush  = 10 * time.Second
)

// seriesKey identifies one Event and its repeats: the same object (by
// kind, namespace, name and UID; its resourceVersion left out), type,
// reason, action and note.
type seriesKey struct {
	regarding                       corev1.ObjectReference
	eventType, reason, action, note string
}

// series is one Event and the repeats folded into it. Guarded by the
// Recorder's mu.
type series struct {
	key          seriesKey
	event        *eventsv1.Event // as created, or to be created
	created      bool            // the API server has the Event
	unconfirmed  bool            // created is a guess: its create may have landed
	count        int32           // occurrences so far
	sent         int32           // the count the API server has (1 once created without a series)
	named        int32           // the count the first create under the Event's name carried (0: none sent)
	lastObserved time.Time       // the latest occurrence
	lastSent     time.Time       // when the latest write of it was sent
	queued       bool            // in the Recorder's queue
	inFlight     bool            // taken out of the queue by Run, not yet settled
}

// record counts one occurrence of k: a repeat joins k's series if its
// last occurrence is within seriesWindow, or else a new Event is queued,
// unless MaxPending are waiting already. Once Run has returned, every
// occurrence is dropped.
func (r *Recorder) record(k seriesKey, regarding corev1.ObjectReference) {
	now := time.Now()
	r.mu.Lock()
	defer r.unlock()
	r.stats.Recorded++
	if r.stopped { // nothing will send it (TestAnEventRecordedAfterRunReturnedIsDroppedCountedAndLogged)
		r.stats.Dropped++
		r.warnLocked(now, "events: dropped an Event: the Recorder's Run has returned",
			"reason", k.reason, "regarding", k.regarding.Kind+" "+k.regarding.Namespace+"/"+k.regarding.Name)
		return
	}
	if s := r.series[k]; s != nil && now.Sub(s.lastObserved) < seriesWindow {
		s.count++
		s.lastObserved = now
		r.stats.Repeats++
		r.enqueueLocked(s)
		return
	}
	if r.creating >= r.opts.MaxPending {
		r.stats.Dropped++
		r.warnLocked(now, "events: dropped an Event: MaxPending Events are waiting to be created (is Run running?)",
			"reason", k.reason, "regarding", k.regarding.Kind+" "+k.regarding.Namespace+"/"+k.regarding.Name, "maxPending", r.opts.MaxPending)
		return
	}
	s := &series{key: k, event: r.newEventLocked(k, regarding, now), count: 1, lastObserved: now}
	r.series[k] = s
	r.creating++
	r.enqueueLocked(s)
}

// restartLocked makes s a new Event for the occurrences after the first
// `stored` of it, whose Event the API server no longer has (an Event
// lives an hour, and anyone may delete one) or refused to create: they
// are created anew, not lost. Like a repeat, it is not held to
// MaxPending: it replaces an Event, it does not add one (a series a
// later one replaced in the Recorder's map, past the series window, adds
// one at most for that key, beside the newer series').
//
// When the server stored none of it (a create taken as created that has
// not landed, so far, or, told by the same 404, that landed and was
// deleted since, whose occurrences are then counted again), it is made
// anew as it was, under its own name:
// should that first create land late (kube-apiserver may finish a write
// its client gave up on), one of the two meets the other, 409, and there
// is one Event, not two
// (TestACreateThatLandsAfterItsClientGaveUpIsNotCreatedTwice); should
// the remade create go unanswered too, the Event may hold the first
// create's occurrences only, so its series is written again (see send).
// Otherwise it is a new Event, named anew, whose eventTime (when it was
// first observed) is its latest occurrence, the first's time not being
// kept: never the time of the remake, after them all
// (TestARemadeEventIsNotDatedAfterTheOccurrencesItCounts).
func (r *Recorder) restartLocked(s *series, stored int32) {
	if stored > 0 {
		s.event = r.newEventLocked(s.key, s.event.Regarding, s.lastObserved)
		s.named = 0
	}
	s.created, s.unconfirmed = false, false
	s.count -= stored
	s.sent = 0
	r.creating++
	r.enqueueLocked(s)
}

// enqueueLocked puts s in the queue if it is not there, and wakes Run.
// A series Run is sending is not queued again: Run queues it once the
// write is settled if more occurrences came meanwhile, so an Event is
// never created twice.
func (r *Recorder) enqueueLocked(s *series) {
	if s.queued || s.inFlight {
		return
	}
	s.queued = true
	r.queue = append(r.queue, s)
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// due is when s may be sent next: at once to be created, and a series
// update flush (seriesFlush) after the last write of it.
func (s *series) due(flush time.Duration) time.Time {
	if !s.created {
		return time.Time{}
	}
	return s.lastSent.Add(flush)
}

// next takes the first series in the queue that is due at now out of it,
// or returns nil and how long until one is (0: none is queued). It also
// forgets, at most once a minute, the series not seen for seriesWindow.
func (r *Recorder) next(now time.Time) (*series, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now)
	var wait time.Duration
	for i, s := range r.queue {
		due := s.due(r.flush)
		if !due.After(now) {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			s.queued, s.inFlight = false, true
			return s, 0
		}
		if d := due.Sub(now); wait == 0 || d < wait {
			wait = d
		}
	}
	return nil, wait
}

// sweepLocked forgets the series that are not queued and were last seen
// seriesWindow ago or more, at most once a minute: their next occurrence
// is a new Event.
func (r *Recorder) sweepLocked(now time.Time) {
	if now.Sub(r.swept) < time.Minute {
		return
	}
	r.swept = now
	for k, s := range r.series {
		if !s.queued && !s.inFlight && now.Sub(s.lastObserved) >= seriesWindow {
			delete(r.series, k)
		}
	}
}

// warnLocked keeps a warning for unlock to log, unless one was logged in
// the last 10 s.
func (r *Recorder) warnLocked(now time.Time, msg string, args ...any) {
	if !r.warned.IsZero() && now.Sub(r.warned) < 10*time.Second {
		return
	}
	r.warned = now
	r.warning = func() { r.opts.Logger.Warn(msg, args...) }
}

// unlock releases mu, then logs the warning warnLocked kept, if any: a
// slow log handler (stderr into a full pipe) must not hold the lock
// that every Eventf takes
// (TestAWarningIsNotLoggedWhileTheRecordersLockIsHeld).
func (r *Recorder) unlock() {
	warn := r.warning
	r.warning = nil
	r.mu.Unlock()
	if warn != nil {
		warn()
	}
}
