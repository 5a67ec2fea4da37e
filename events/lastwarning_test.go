package events

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scriptSink answers the creates in turn with script's errors, nil for
// a create that succeeds; a create past the script hangs until its
// context ends.
type scriptSink struct {
	fakeSink
	mu     sync.Mutex
	script []error
}

func (s *scriptSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.mu.Lock()
	if len(s.script) == 0 {
		s.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	err := s.script[0]
	s.script = s.script[1:]
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.fakeSink.create(ctx, ev)
}

// A create is refused and its warning logged; a moment later Run's ctx
// ends with an Event waiting behind a hung create. That Event is dropped,
// and said so in the log, though a warning was logged less than 10 s
// before: nothing will ever log after Run's last word, so the 10 s
// between warnings must not swallow it.
func TestTheDropAsRunReturnsIsLoggedEvenJustAfterAnotherWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &scriptSink{script: []error{apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)}}
		r, log := newTestRecorder(t, sink, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours")) // refused: a warning
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Normal, "Synced", "Update", "in sync")) // its create hangs
		synctest.Wait()
		require.NoError(t, r.Eventf(web, Normal, "Pruned", "Delete", "deleted 3 stale keys")) // waits behind it
		cancel()
		<-done
		assert.Equal(t, Stats{Dropped: 1, Refused: 2, Recorded: 3}, r.Stats()) // refused, and the hung create cut
		assert.Contains(t, log.String(), `msg="events: dropped Events waiting to be created: the Recorder's Run has returned" dropped=1`,
			"an Event dropped as Run returned, and not a word of it in the log")
	})
}
