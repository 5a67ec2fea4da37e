package events

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// storeSink models the API server's store of Events: a series patch of a
// name it does not hold is a 404. firstCreate, if set, decides the first
// create's fate: whether it lands, and the error its client sees; it is
// called without the sink's lock, so it may block (a hung connection).
type storeSink struct {
	mu          sync.Mutex
	stored      map[string]*eventsv1.Event
	creates     int
	firstCreate func(ctx context.Context) (lands bool, err error)
}

func (s *storeSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	s.creates++
	first := s.creates == 1
	s.mu.Unlock()
	lands, err := true, error(nil)
	if first && s.firstCreate != nil {
		lands, err = s.firstCreate(ctx)
	}
	if !lands {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stored == nil {
		s.stored = map[string]*eventsv1.Event{}
	}
	s.stored[ev.Name] = ev.DeepCopy()
	return ev, err
}

func (s *storeSink) patchSeries(_ context.Context, _, name string, series eventsv1.EventSeries) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.stored[name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, name)
	}
	ev.Series = series.DeepCopy()
	return nil
}

// counts returns the occurrence count of every stored Event.
func (s *storeSink) counts() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int32
	for _, ev := range s.stored {
		n := int32(1)
		if ev.Series != nil {
			n = ev.Series.Count
		}
		out = append(out, n)
	}
	return out
}

// TestACutCreateRemadeByTheNextOccurrenceCountsBothOccurrences: the
// first create is cut before it lands (no answer) and taken as created;
// the second occurrence's series write finds no Event (404), and the
// Event is made anew counting both, since the server stored neither.
// Found by an adversarial review: the remade Event counted only the
// second.
func TestACutCreateRemadeByTheNextOccurrenceCountsBothOccurrences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &storeSink{firstCreate: func(context.Context) (bool, error) {
			return false, errors.New("read tcp: connection reset by peer")
		}}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(time.Minute) // the series update is due, 404s, the Event is remade
		synctest.Wait()
		require.Len(t, sink.counts(), 1, "the remade Event was never created: %+v", r.Stats())
		assert.Equal(t, []int32{2}, sink.counts(),
			"two occurrences, neither stored by the server, yet the remade Event counts fewer: %+v", r.Stats())
	})
}

// TestACreateThatLandedAnsweredBadGatewayIsNotCreatedTwice: the create
// lands, but the client gets a proxy's 502 (its connection to the API
// server cut after the server acted), a Status error. A 5xx may come
// after the write, so the Event is taken as created and the next
// occurrence goes to its series: one Event. Found by an adversarial
// review: only a timeout counted as "may have landed".
func TestACreateThatLandedAnsweredBadGatewayIsNotCreatedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &storeSink{firstCreate: func(context.Context) (bool, error) {
			return true, apierrors.NewGenericServerResponse(http.StatusBadGateway, "create",
				schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", "bad gateway", 0, false)
		}}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		require.Len(t, sink.counts(), 1, "the create landed")
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Len(t, sink.counts(), 1, "one series, two Events (counts %v): %+v", sink.counts(), r.Stats())
	})
}
