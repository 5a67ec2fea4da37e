package sharedinformer

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// hangGuard bounds every wait for something that must happen: a guard
// against a hang, not a timing (a short bound would assert the machine's
// speed). The package's external tests have one of the same name.
const hangGuard = time.Minute

// startListener runs a listener for h until the test ends.
func startListener(t *testing.T, h Handler[*corev1.Pod], policy BufferPolicy, trace informer.TraceHook, report func(error)) *listener[*corev1.Pod] {
	t.Helper()
	if report == nil {
		report = func(err error) { t.Errorf("unexpected report: %v", err) }
	}
	l := newListener("test", h, HandlerOptions{}, policy.withDefaults(), trace, report, quietLogger())
	ctx, cancel := context.WithCancel(context.Background())
	l.start(ctx, new(sync.WaitGroup))
	t.Cleanup(func() { cancel(); <-l.done })
	return l
}

func TestAddNeverBlocksWhileTheHandlerIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var got []string
		h := HandlerFuncs[*corev1.Pod]{AddFunc: func(p *corev1.Pod, _ bool) {
			<-release
			mu.Lock()
			got = append(got, p.Name)
			mu.Unlock()
		}}
		l := startListener(t, h, BufferPolicy{InitialSize: 2}, nil, nil)

		start := time.Now()
		for _, name := range []string{"a", "b", "c", "d", "e"} {
			l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod(name)})
		}
		// Bubble time: an add that waited for the handler would deadlock the
		// bubble or let time pass; a slow machine does neither.
		assert.Zero(t, time.Since(start), "adds to a stuck handler's buffer return at once")
		close(release)
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 5 }, 5*time.Second, time.Millisecond)
		assert.Equal(t, []string{"a", "b", "c", "d", "e"}, got, "delivered in order")
	})
}

func TestAPanickingHandlerIsReportedAndKeepsReceiving(t *testing.T) {
	reports := make(chan error, 1)
	delivered := make(chan string, 2)
	h := HandlerFuncs[*corev1.Pod]{AddFunc: func(p *corev1.Pod, _ bool) {
		delivered <- p.Name
		if p.Name == "bad" {
			panic("boom")
		}
	}}
	l := startListener(t, h, BufferPolicy{}, nil, func(err error) { reports <- err })
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("bad")})
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("good")})
	assert.Equal(t, "bad", <-delivered)
	assert.Equal(t, "good", <-delivered)
	err := <-reports
	assert.ErrorContains(t, err, "handler test panicked on add of default/bad: boom")
}

func TestRemovedListenerStopsCallingItsHandlerAndItsGoroutineEnds(t *testing.T) {
	calls := make(chan string, 10)
	l := newListener[*corev1.Pod]("test", HandlerFuncs[*corev1.Pod]{AddFunc: func(p *corev1.Pod, _ bool) { calls <- p.Name }},
		HandlerOptions{}, BufferPolicy{}.withDefaults(), nil, func(error) {}, quietLogger())
	l.start(context.Background(), new(sync.WaitGroup))
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("before")})
	assert.Equal(t, "before", <-calls)

	l.remove(ErrHandlerRemoved)
	select {
	case <-l.done:
	case <-time.After(hangGuard):
		t.Fatal("the listener goroutine did not end after remove")
	}
	assert.ErrorIs(t, l.endedErr(), ErrHandlerRemoved, "the end says why")
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("after")})
	assert.Empty(t, calls)
}

func TestListenerSyncsOnceUpstreamSyncedAndEveryInitialAddWasHandled(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFuncs[*corev1.Pod]{AddFunc: func(*corev1.Pod, bool) { <-release }}
	l := startListener(t, h, BufferPolicy{}, nil, nil)
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("a"), flag: true})
	l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("b"), flag: true})
	l.markUpstreamSynced()
	select {
	case <-l.synced:
		t.Fatal("synced before the handler got its initial list")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	select {
	case <-l.synced:
	case <-time.After(hangGuard):
		t.Fatal("not synced after the initial list was handled")
	}
}

func TestBufferWarningIsEmittedOncePerBurst(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	warnings := 0
	trace := func(e informer.TraceEvent) {
		if e.Kind == KindBufferWarning {
			mu.Lock()
			warnings++
			mu.Unlock()
		}
	}
	l := startListener(t, HandlerFuncs[*corev1.Pod]{AddFunc: func(*corev1.Pod, bool) { <-release }},
		BufferPolicy{WarnDepth: 3}, trace, nil)
	for range 10 {
		l.add(notification[*corev1.Pod]{kind: addNotification, obj: pod("x")})
	}
	mu.Lock()
	assert.Equal(t, 1, warnings)
	mu.Unlock()
	close(release)
	require.Eventually(t, func() bool { return l.depth() == 0 }, hangGuard, time.Millisecond)
}
