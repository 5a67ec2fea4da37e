package events

import (
	"context"
	"errors"
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

// holdingStoreSink is a store of Events (a patch of a name it does not
// hold is a 404) whose first create waits for release, then is cut
// before it lands (no answer).
type holdingStoreSink struct {
	mu      sync.Mutex
	stored  map[string]*eventsv1.Event
	creates int
	release chan struct{}
}

func (s *holdingStoreSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	s.creates++
	first := s.creates == 1
	s.mu.Unlock()
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nil, errors.New("read tcp: connection timed out")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stored == nil {
		s.stored = map[string]*eventsv1.Event{}
	}
	s.stored[ev.Name] = ev.DeepCopy()
	return ev, nil
}

func (s *holdingStoreSink) patchSeries(_ context.Context, _, name string, series eventsv1.EventSeries) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.stored[name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, name)
	}
	ev.Series = series.DeepCopy()
	return nil
}

func (s *holdingStoreSink) total() (n int32, counts []int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range s.stored {
		c := int32(1)
		if ev.Series != nil {
			c = ev.Series.Count
		}
		counts = append(counts, c)
		n += c
	}
	return n, counts
}

// TestOccurrencesOfACutCreateAreNotLostWhenANewSeriesStartsMeanwhile:
// the first create hangs (a black-holed connection) and is then cut
// without landing; a repeat came meanwhile. Seven minutes on, past the
// series window, a third occurrence starts a new series. The cut create
// is taken as created, its series write finds no Event (404), and the
// occurrences it never stored are created as an Event of their own,
// though another series has the key now. Found by an adversarial review:
// they were dropped, the series being no longer the key's.
func TestOccurrencesOfACutCreateAreNotLostWhenANewSeriesStartsMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &holdingStoreSink{release: make(chan struct{})}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait() // the first create is in flight, held
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(7 * time.Minute)
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // past the window: a new series
		close(sink.release)                                                               // the first create is cut, unlanded
		time.Sleep(time.Minute)
		synctest.Wait()
		n, counts := sink.total()
		assert.Equal(t, int32(3), n,
			"three occurrences, the server stored none of the first two, yet the stored Events count %v: %+v", counts, r.Stats())
	})
}
