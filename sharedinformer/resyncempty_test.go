package sharedinformer_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// TestAResyncWhoseCacheFillsBeforeItsReplayStillRemindsItsHandlers: the
// handlers due at a resync are recorded before the DeltaFIFO replays the
// cache, and a key popped in between is cached and replayed: it must
// still reach them. Here a's pop is held (trace hook) while the t=1s tick
// records with an empty cache, then let go; the tick's replay then syncs
// a. Found by an adversarial review, when nothing was recorded for a
// resync that found the cache empty.
func TestAResyncWhoseCacheFillsBeforeItsReplayStillRemindsItsHandlers(t *testing.T) {
	clock := &nowSignal{FakeClock: workqueue.NewFakeClock(time.Unix(1_000_000, 0)), called: make(chan struct{})}
	var holdPop atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	var heldOnce, syncOnce sync.Once
	syncQueued := make(chan struct{})
	hook := informer.TraceHook(func(e informer.TraceEvent) {
		if e.Stage != informer.StageFIFO || e.Key != "default/a" {
			return
		}
		if e.Kind == deltafifo.KindPopped && holdPop.Load() {
			heldOnce.Do(func() {
				holdPop.Store(false)
				close(held)
				<-release
			})
		}
		if e.Kind == deltafifo.KindQueued && strings.HasPrefix(e.Detail, string(deltafifo.Sync)) {
			syncOnce.Do(func() { close(syncQueued) })
		}
	})
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock, Trace: hook})
	rec := &recorder{}
	_, err := inf.AddEventHandler(rec, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	holdPop.Store(true)
	_, err = lw.Create(configMap("a"))
	require.NoError(t, err)
	waitClosed(t, held, hangGuard, "a's pop was never held")
	clock.armed.Store(true)
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	go clock.Step(time.Second)
	waitClosed(t, clock.called, hangGuard, "the t=1s resync never ran")
	close(release)
	waitClosed(t, syncQueued, hangGuard, "the t=1s replay never queued a Sync for a")

	_, err = lw.Create(configMap("fence"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s := rec.snapshot()
		return len(s) > 0 && s[len(s)-1] == "add fence"
	}, hangGuard, time.Millisecond, "fence never reached the handler: %q", rec.snapshot())
	assert.Equal(t, []string{"add a", "resync a", "add fence"}, rec.snapshot(),
		"the handler was due at the t=1s resync, whose replay held a: it must be reminded of a")
}
