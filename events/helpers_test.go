package events

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/internal/testlog"
)

// fakeSink records the writes a Recorder makes. fail, if set, decides
// each write's error; block, if set, holds every create until it is
// closed.
type fakeSink struct {
	mu      sync.Mutex
	created []*eventsv1.Event
	patched []eventsv1.EventSeries
	fail    func() error
	block   chan struct{}
}

func (f *fakeSink) create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(); err != nil {
			return nil, err
		}
	}
	f.created = append(f.created, ev.DeepCopy())
	return ev, nil
}

func (f *fakeSink) patchSeries(_ context.Context, _, _ string, s eventsv1.EventSeries) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(); err != nil {
			return err
		}
	}
	f.patched = append(f.patched, s)
	return nil
}

// writes says what the sink has received: the creates, as their series'
// counts (1 for none), then the patches' counts.
func (f *fakeSink) writes() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var created, patched []int32
	for _, ev := range f.created {
		n := int32(1)
		if ev.Series != nil {
			n = ev.Series.Count
		}
		created = append(created, n)
	}
	for _, s := range f.patched {
		patched = append(patched, s.Count)
	}
	return fmt.Sprintf("created %v, patched %v", created, patched)
}

func testScheme(t testing.TB) *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// newTestRecorder returns a Recorder over sink with opts' defaults filled
// in, and the buffer it logs to.
func newTestRecorder(t testing.TB, sink sink, opts Options) (*Recorder, *testlog.Buffer) {
	t.Helper()
	var buf testlog.Buffer
	opts.Controller = "example.com/test"
	opts.Instance = "test-0"
	opts.Scheme = testScheme(t)
	opts.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	opts, err := opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return newRecorder(sink, opts), &buf
}

// runRecorder runs r until the test's end.
func runRecorder(t *testing.T, r *Recorder) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}
