package events

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The Event is created, expires, and one more occurrence comes: its
// series write is answered 404, and that occurrence is created as a new
// Event, not dropped with the series. (Found by review: it was dropped.)
func TestAnOccurrenceWhoseSeriesWriteFindsTheEventExpiredIsCreatedAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &patchSink{release: make(chan struct{}),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "web.1")}
		close(sink.release) // patches answer at once
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		// the Event expires (event-ttl); then the refusal happens again
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(time.Minute)
		synctest.Wait()
		sink.mu.Lock()
		created := len(sink.created)
		sink.mu.Unlock()
		assert.Equal(t, 2, created, "the occurrence after the Event expired is in no Event: %+v", r.Stats())
	})
}

// Occurrence 2 is in the series write that finds the Event expired, and
// occurrence 3 comes while that write is in flight: the new Event counts
// both, since the API server stored neither. (Found by review: it counted
// one.)
func TestARemadeEventCountsEveryOccurrenceTheServerDidNotStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &patchSink{release: make(chan struct{}),
			patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "web.1")}
		r, _ := newTestRecorder(t, sink, Options{})
		runRecorder(t, r)
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		synctest.Wait()
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		time.Sleep(10 * time.Second) // the patch of count 2 is sent and hangs
		synctest.Wait()
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "not ours"))
		close(sink.release) // 404
		time.Sleep(time.Minute)
		synctest.Wait()
		sink.mu.Lock()
		defer sink.mu.Unlock()
		if !assert.Len(t, sink.created, 2) {
			return
		}
		n := int32(1)
		if s := sink.created[1].Series; s != nil {
			n = s.Count
		}
		assert.Equal(t, int32(2), n, "the new Event should count occurrences 2 and 3, neither of which the API server stored")
	})
}

// Run sends until its ctx ends. A ctx with a deadline beyond the next
// token (a Run bounded by a timeout) is not an ended ctx: Run waits for
// the token. (Found by review: rate.Limiter.Wait fails at once then, and
// Run returned, leaving a series in flight for good.)
func TestRunReturnsOnlyWhenItsContextEndsNotAtADeadlineAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		r, _ := newTestRecorder(t, sink, Options{QPS: 0.01, Burst: 1}) // one token every 100 s
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		returned := make(chan time.Duration, 1)
		go func() { _ = r.Run(ctx); returned <- time.Since(start) }()
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "one"))
		assert.NoError(t, r.Eventf(web, Warning, "SecretNotOurs", "Create", "two"))
		took := <-returned
		assert.GreaterOrEqual(t, took, time.Minute, "Run returned %v after it started, while its ctx (1 min) was live: %v", took, ctx.Err())
	})
}
