package events

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"golang.org/x/time/rate"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/internal/restclient"
)

// sink is where a Recorder writes: the API server's events.k8s.io/v1
// (restSink), or a test's record of the writes.
type sink interface {
	create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error)
	patchSeries(ctx context.Context, namespace, name string, s eventsv1.EventSeries) error
}

// Run sends the recorded Events until ctx ends: creates, and series
// updates at most every 10 s, all within Options.QPS and Burst, one at
// a time, each within Options.RequestTimeout
// (TestAHungCreateHoldsTheNextEventBackOnlyForTheRequestTimeout). Call it
// once, in its own goroutine; Events still waiting to be created when
// it returns, and those recorded after, are dropped (Stats.Dropped) and
// logged, the first even within 10 s of another warning; a series'
// repeats not yet written are not sent. A write in flight as ctx ends
// is cut, and counted (Stats.Refused) and logged as any write that
// failed; a create so cut may have landed, and is taken as created
// (TestACreateCutAsRunsContextEndsIsCountedAndLogged); a series update
// so cut is logged as cut, not as a refusal
// (TestASeriesUpdateCutAsRunsContextEndsIsLoggedAsCutNotRefused). A
// write the API server refuses is counted (Stats.Refused) and logged,
// not retried, and so is a series update that gets no answer (a timeout,
// a cut connection), logged as unanswered, not as a refusal
// (TestASeriesUpdateThatTimesOutIsLoggedAsUnansweredNotRefused): an Event is a note for people, and the next occurrence is
// recorded anew, one recorded while the write was in flight included.
func (r *Recorder) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.running {
		r.mu.Unlock()
		return errors.New("events: Recorder.Run called twice")
	}
	r.running = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.stopped = true
		if r.creating > 0 { // never to be sent (TestAnEventStillWaitingWhenRunReturnsIsCountedAsDroppedAndLogged)
			r.stats.Dropped += int64(r.creating)
			// Run's last word, logged whenever the last warning was: no
			// later one will tell of these
			// (TestTheDropAsRunReturnsIsLoggedEvenJustAfterAnotherWarning).
			r.warned = time.Time{}
			r.warnLocked(time.Now(), "events: dropped Events waiting to be created: the Recorder's Run has returned",
				"dropped", r.creating)
			r.creating = 0
		}
		r.unlock()
	}()
	limiter := rate.NewLimiter(rate.Limit(r.opts.QPS), r.opts.Burst)
	for ctx.Err() == nil { // not a write with an ended ctx, which fails
		s, wait := r.next(time.Now())
		if s != nil {
			if !waitForToken(ctx, limiter) {
				r.putBack(s)
				return nil // ctx ended
			}
			r.send(ctx, s)
			continue
		}
		var due <-chan time.Time
		var timer *time.Timer
		if wait > 0 {
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
	return nil
}

// waitForToken waits for limiter's next token, and reports false if ctx
// ends first. Unlike rate.Limiter.Wait, it does not give up at once when
// the token comes after ctx's deadline: a deadline is not the end of ctx.
func waitForToken(ctx context.Context, limiter *rate.Limiter) bool {
	if ctx.Err() != nil {
		return false
	}
	reservation := limiter.Reserve()
	delay := reservation.Delay()
	if delay == 0 {
		return true
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		reservation.Cancel()
		return false
	}
}

// putBack returns s, taken out of the queue by next, to the queue.
func (r *Recorder) putBack(s *series) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.inFlight = false
	r.enqueueLocked(s)
}

// send writes s: the Event, with its series if it has repeats already,
// or the series' count since the last write. Once the write is settled,
// s is queued again if more occurrences came meanwhile.
func (r *Recorder) send(ctx context.Context, s *series) {
	r.mu.Lock()
	created, count := s.created, s.count
	series := eventsv1.EventSeries{Count: count, LastObservedTime: metav1.NewMicroTime(s.lastObserved)}
	ev := s.event.DeepCopy()
	if !created {
		r.creating--
		if s.named == 0 {
			s.named = count
		}
		if count >= 2 {
			ev.Series = &series
		}
	}
	s.lastSent = time.Now()
	r.mu.Unlock()

	var err error
	wctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout) // a hung write holds the rest back no longer
	if created {
		err = r.sink.patchSeries(wctx, ev.Namespace, ev.Name, series)
	} else {
		ev, err = r.sink.create(wctx, ev)
	}
	cancel()
	met := !created && apierrors.IsAlreadyExists(err)
	if met {
		// The Event is there, under a name no one else gives: this create
		// landed on an attempt whose answer was lost, and the REST
		// client's retry met it
		// (TestACreateTheRESTClientRetriedAfterItLandedIsCountedAsCreated),
		// or an earlier create of it, taken as created, landed late, with
		// fewer occurrences, maybe: its series is written again below
		// (TestACreateThatLandsJustBeforeItIsMadeAnewStillCountsEveryOccurrence).
		err = nil
	}

	r.mu.Lock()
	defer r.unlock()
	s.inFlight = false
	if err != nil {
		// A write that failed as ctx ended is settled as any other: a
		// refusal counted and logged, its in-flight occurrences left
		// waiting for Run's end to count
		// (TestACreateRefusedAsRunsContextEndsIsCountedAndItsRepeatDropped);
		// a create ctx's end cut got no answer and may have landed
		// (TestACreateCutAsRunsContextEndsIsCountedAndLogged).
		r.stats.Refused++
		regarding := s.key.regarding.Kind + " " + s.key.regarding.Namespace + "/" + s.key.regarding.Name
		if !created && mayHaveLanded(err) {
			// No answer (a cut connection, a timeout) or a server error
			// (5xx): it may be stored, under the name this Recorder gave
			// it, so it is taken as created and the next occurrence
			// updates its series. If it never landed, that update finds
			// it missing and creates it anew (below), with every
			// occurrence.
			now := time.Now()
			r.warnLocked(now, "events: an Event's create may have landed; it is taken as created",
				"reason", s.key.reason, "regarding", regarding, "err", err)
			s.created, s.unconfirmed, s.sent = true, true, count
			if s.named < count && now.Sub(s.lastObserved) < seriesWindow {
				// A remake under the Event's own name: the first create,
				// carrying fewer, may land before it and it then meet
				// that one, 409, unseen. The server holds the first's
				// count at least, so the series is written again, or, if
				// no create has landed yet, the Event made anew again,
				// until one is answered or the series' window ends
				// (TestARemadeCreateThatLandsAfterTheFirstStillCountsEveryOccurrence).
				s.sent = s.named
			}
			if s.count > s.sent {
				r.enqueueLocked(s)
			}
			return
		}
		what := "events: the API server refused an Event; it is not retried"
		switch {
		case ctx.Err() != nil && !answered(err):
			// Not the server's refusal: the Recorder stopped
			// (TestASeriesUpdateCutAsRunsContextEndsIsLoggedAsCutNotRefused).
			what = "events: an Event's write was cut as the Recorder's Run returned; it is not retried"
		case !answered(err):
			// Nor is a timeout or a cut connection
			// (TestASeriesUpdateThatTimesOutIsLoggedAsUnansweredNotRefused).
			what = "events: an Event's write got no answer; it is not retried"
		}
		r.warnLocked(time.Now(), what, "reason", s.key.reason, "regarding", regarding, "err", err)
		switch {
		case created && apierrors.IsNotFound(err) && s.count > s.sent:
			// The Event expired (or was deleted): the occurrences it never
			// stored, this write's and any since, make a new Event. One
			// taken as created that never landed stored none; one that
			// landed and was deleted since answers the same 404, and is
			// remade whole too
			// (TestAnEventTakenAsCreatedThatLandedAndWasDeletedIsRemadeWithEveryOccurrence). A
			// series a later occurrence has replaced meanwhile (past the
			// series window) is remade all the same, as an Event of its
			// own.
			stored := s.sent
			if s.unconfirmed {
				stored = 0
			}
			r.restartLocked(s, stored)
		case !created && s.count > count:
			// Occurrences came while the refused create was in flight:
			// they were in no write, so, as an occurrence after the
			// refusal would, they make a new Event
			// (TestAnOccurrenceRecordedWhileARefusedCreateWasInFlightIsCreatedNext).
			r.restartLocked(s, count)
		case !created || apierrors.IsNotFound(err): // never made, or gone with nothing new: the next occurrence makes a new one
			if r.series[s.key] == s {
				delete(r.series, s.key)
			}
		case s.count > count:
			// Occurrences came while the update was in flight, when
			// enqueueLocked skips a series: queue it again, or they wait
			// for one more and are lost past the series window. Its next
			// write carries the count so far, this one's included
			// (TestAnOccurrenceRecordedWhileASeriesUpdateTimesOutIsStillWritten).
			r.enqueueLocked(s)
		}
		return
	}
	if created {
		r.stats.Updated++
		if s.unconfirmed { // the update found it: its create landed
			// (TestACreateWhoseAnswerWasLostIsCountedAsCreatedOnceItsSeriesUpdateFindsIt)
			r.stats.Created++
			s.unconfirmed = false
		}
	} else {
		r.stats.Created++
		s.created = true
		if ev != nil && ev.Name != "" {
			s.event.Name = ev.Name
		}
	}
	s.sent = count
	if met {
		s.sent = 1 // what any create of it stored, at least
	}
	if s.count > s.sent {
		r.enqueueLocked(s)
	}
}

// answered reports whether err is the API server's answer (a Status),
// not a request cut short.
func answered(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status)
}

// mayHaveLanded reports whether a create that failed with err may still
// have stored its Event: no answer came (the connection went, or the
// request timed out), or a server error (a 5xx, from the API server or a
// proxy before it, may come after the write). A 4xx refused it (409
// AlreadyExists, its own create having landed, is a success: see send).
func mayHaveLanded(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return status.Status().Code >= 500
}

// restSink writes Events to events.k8s.io/v1.
type restSink struct{ client *rest.RESTClient }

// newRESTSink makes a client of cfg with no client-side limit of its
// own: the Recorder's limiter (Options.QPS, Burst) is the one.
func newRESTSink(cfg *rest.Config) (*restSink, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter, cfg.QPS = nil, -1
	scheme := runtime.NewScheme()
	if err := eventsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	client, err := restclient.New(cfg, eventsv1.SchemeGroupVersion, serializer.NewCodecFactory(scheme).WithoutConversion(), false)
	if err != nil {
		return nil, err
	}
	return &restSink{client: client}, nil
}

func (s *restSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	out := &eventsv1.Event{}
	err := s.client.Post().Namespace(ev.Namespace).Resource("events").Body(ev).Do(ctx).Into(out)
	return out, err
}

func (s *restSink) patchSeries(ctx context.Context, namespace, name string, series eventsv1.EventSeries) error {
	body, err := json.Marshal(map[string]any{"series": series})
	if err != nil {
		return err
	}
	return s.client.Patch(types.MergePatchType).Namespace(namespace).Resource("events").Name(name).Body(body).Do(ctx).Error()
}
