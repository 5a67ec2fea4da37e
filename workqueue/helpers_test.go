package workqueue

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/listwatch/informer"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// Queue starts none, Run waits for its workers, and a shut-down queue
// arms no timer.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// epoch is the start time of every FakeClock in these tests.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newFake returns a queue on a FakeClock, with opts' other fields as
// given.
func newFake[K comparable](opts Options[K]) (*Queue[K], *FakeClock) {
	clock := NewFakeClock(epoch)
	opts.Clock = clock
	return New(opts), clock
}

// mustGet gets a key that must be ready at once. Call it only from the
// test's goroutine (it may call t.Fatalf); other goroutines use getWithin.
func mustGet[K comparable](t testing.TB, q *Queue[K]) K {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a timing
	defer cancel()
	key, err := q.Get(ctx)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return key
}

// getWithin is Get with a context that ends after d: it returns the key,
// or the error when none came. A short d shows that Get blocks; a long one
// guards against a hang.
func getWithin[K comparable](q *Queue[K], d time.Duration) (K, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return q.Get(ctx)
}

// recorder is a trace hook that keeps events as their String form
// (without the time), and can hand them to a test goroutine that waits
// for one.
type recorder struct {
	mu     sync.Mutex
	lines  []string
	events chan informer.TraceEvent // nil unless made by watch
}

func (r *recorder) hook(e informer.TraceEvent) {
	if e.Stage != informer.StageWorkqueue || e.Time.IsZero() {
		panic("workqueue events have Stage workqueue and a time")
	}
	r.mu.Lock()
	r.lines = append(r.lines, e.String())
	r.mu.Unlock()
	if r.events != nil {
		r.events <- e
	}
}

// take returns the lines recorded since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines := r.lines
	r.lines = nil
	return lines
}

// watch makes the recorder pass every event to the returned channel too;
// call it before the queue is in use. The channel is large enough that a
// test never blocks the queue.
func (r *recorder) watch() <-chan informer.TraceEvent {
	r.events = make(chan informer.TraceEvent, 10_000)
	return r.events
}

// waitForEvent reads events until one of kind for key arrives.
func waitForEvent(t testing.TB, events <-chan informer.TraceEvent, kind, key string) informer.TraceEvent {
	t.Helper()
	timeout := time.After(time.Minute) // a guard against a hang, not a timing
	for {
		select {
		case e := <-events:
			if e.Kind == kind && e.Key == key {
				return e
			}
		case <-timeout:
			t.Fatalf("no %q event for %q", kind, key)
		}
	}
}
