package sharedinformer_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// blockingHandler blocks in its nth OnAdd until release is closed, and
// sleeps for every other call; it counts the calls that started.
type blockingHandler struct {
	nth     int64
	sleep   time.Duration
	calls   atomic.Int64
	blocked chan struct{} // closed when the nth call starts
	release chan struct{}
}

func newBlockingHandler(nth int64, sleep time.Duration) *blockingHandler {
	return &blockingHandler{nth: nth, sleep: sleep, blocked: make(chan struct{}), release: make(chan struct{})}
}

func (h *blockingHandler) OnAdd(*corev1.ConfigMap, bool) {
	if h.calls.Add(1) == h.nth {
		close(h.blocked)
		<-h.release
	}
	time.Sleep(h.sleep)
}
func (h *blockingHandler) OnUpdate(_, _ *corev1.ConfigMap)  {}
func (h *blockingHandler) OnDelete(*corev1.ConfigMap, bool) {}

// waitClosed fails the test unless ch closes within d.
func waitClosed(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}

func TestRunReturnsPromptlyAfterCancelAndNoBufferedCallStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const objects = 10_000
		inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
		for i := range objects {
			_, err := lw.Create(configMap(fmt.Sprintf("cm-%05d", i)))
			require.NoError(t, err)
		}
		h := newBlockingHandler(100, 10*time.Millisecond)
		reg, err := inf.AddEventHandler(h, sharedinformer.HandlerOptions{})
		require.NoError(t, err)
		assert.NoError(t, reg.Err(), "a handler that may still be called has no end")

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = inf.Run(ctx); close(done) }()
		waitClosed(t, inf.Synced(), time.Minute, "the informer synced (every object buffered for the handler)")
		waitClosed(t, h.blocked, time.Minute, "the 100th call started")

		cancel() // while call 100 is in progress, with about 9,900 buffered
		start := time.Now()
		close(h.release)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("Run still running 5s after cancel; %d handler calls started in all", h.calls.Load())
		}
		took := time.Since(start)
		t.Logf("Run returned %v after cancel", took)
		// Bubble time: a loaded machine that runs Run late adds none of it.
		assert.LessOrEqual(t, took, 110*time.Millisecond, "one in-flight call (10ms) + 100ms is the bound")
		assert.EqualValues(t, 100, h.calls.Load(), "no call starts after cancel: buffered notifications are dropped")
		assert.ErrorIs(t, reg.Err(), context.Canceled, "the handler says why it stopped")
	})
}

func TestAddEventHandlerAfterRunReturnedFails(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	waitClosed(t, inf.Synced(), time.Minute, "synced")
	cancel()
	<-done

	reg, err := inf.AddEventHandler(&recorder{}, sharedinformer.HandlerOptions{Name: "late"})
	require.Error(t, err, "a handler added to a stopped informer would never be called; got a registration synced=%v", reg != nil && reg.HasSynced())
	assert.Contains(t, err.Error(), "stopped")
}

func TestRemovingAHandlerBeforeItsInitialListWasDeliveredClosesItsSynced(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	for i := range 3 {
		_, err := lw.Create(configMap(fmt.Sprintf("cm-%d", i)))
		require.NoError(t, err)
	}
	h := newBlockingHandler(1, 0)
	reg, err := inf.AddEventHandler(h, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitClosed(t, h.blocked, time.Minute, "the first initial add started")

	require.NoError(t, inf.RemoveEventHandler(reg))
	close(h.release)
	waitClosed(t, reg.Synced(), time.Minute, "a removed handler's Synced closes: nothing more of its list will come")
	assert.EqualValues(t, 1, h.calls.Load())
}

func TestStoppedTellsWhenARemovedHandlersCallInProgressHasReturned(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, err := lw.Create(configMap("cm"))
	require.NoError(t, err)
	h := newBlockingHandler(1, 0)
	reg, err := inf.AddEventHandler(h, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitClosed(t, h.blocked, time.Minute, "the call started")

	require.NoError(t, inf.RemoveEventHandler(reg))
	select {
	case <-reg.Stopped():
		t.Fatal("Stopped closed while the handler's call was still in progress")
	case <-time.After(50 * time.Millisecond):
	}
	close(h.release)
	waitClosed(t, reg.Stopped(), time.Minute, "Stopped closes once the call in progress returned")
}

func TestStoppedIsClosedAtOnceForAHandlerRemovedBeforeRun(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	reg, err := inf.AddEventHandler(&recorder{}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	require.NoError(t, inf.RemoveEventHandler(reg))
	waitClosed(t, reg.Stopped(), time.Second, "nothing ever ran")
	waitClosed(t, reg.Synced(), time.Second, "nothing will come")
}
