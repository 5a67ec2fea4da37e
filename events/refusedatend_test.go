package events

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// answeredSink answers every create 403 Forbidden once release is
// closed, whether or not the create's context has ended by then: the
// answer came back before the client saw the end.
type answeredSink struct {
	fakeSink
	release chan struct{}
}

func (s *answeredSink) create(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	<-s.release
	return nil, apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "", nil)
}

// Run's ctx ends while a create is in flight, with a repeat recorded
// meanwhile, and the API server's answer, a refusal, comes back all the
// same. The refusal is counted and logged, as any is; and the repeat,
// which a refused create makes a new Event of, is an Event Run leaves
// unsent: counted in Stats.Dropped and logged.
func TestACreateRefusedAsRunsContextEndsIsCountedAndItsRepeatDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &answeredSink{release: make(chan struct{})}
		r, log := newTestRecorder(t, sink, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait() // its create is in flight
		require.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		cancel()
		close(sink.release) // 403, as ctx ends
		<-done
		assert.Equal(t, Stats{Repeats: 1, Dropped: 1, Refused: 1, Recorded: 2}, r.Stats(),
			"the refusal, and the repeat it leaves unsent, are neither counted nor logged")
		assert.Contains(t, log.String(), `msg="events: the API server refused an Event; it is not retried"`)
		assert.Contains(t, log.String(), `msg="events: dropped Events waiting to be created: the Recorder's Run has returned" dropped=1`)
	})
}
