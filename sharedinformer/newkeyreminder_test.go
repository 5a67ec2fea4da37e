package sharedinformer_test

import (
	"sync"
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

// TestARelistOfAnObjectNotYetCachedAtTheResyncRemindsNoHandler: a resync
// replays only the cache, so a key first queued as an add of an object
// not yet cached was never skipped by it; and any change a pop tells
// every handler settles what it owed them. Found by an adversarial
// review: a relist that then found the object unchanged reminded the
// handler of it, for a resync that never concerned it (doc.go: "a relist
// tells no handler of an object that did not change, unless a resync
// skipped it while it was queued").
//
// x is created while the pop loop is held in OnError (b rejected by the
// index); the t=1s resync (h due) replays a, and cannot replay x, which
// is not cached; a relist then lists x unchanged. Let go, x's pop is
// [Added, Replaced(same version)]: h hears "add x", and no reminder (it
// used to hear one, for a resync that never concerned x).
func TestARelistOfAnObjectNotYetCachedAtTheResyncRemindsNoHandler(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	blocked, unblock := make(chan struct{}), make(chan struct{})
	resynced, relisted := make(chan struct{}), make(chan struct{})
	var resyncOnce, relistOnce sync.Once
	var afterResync sync.Once
	var resyncSeen = make(chan struct{})
	xQueued := make(chan struct{})
	var xOnce sync.Once
	trace := func(e informer.TraceEvent) {
		if e.Stage != informer.StageFIFO {
			return
		}
		switch {
		case e.Kind == deltafifo.KindQueued && e.Key == "default/x":
			xOnce.Do(func() { close(xQueued) })
		case e.Kind == deltafifo.KindResync:
			resyncOnce.Do(func() { close(resynced) })
			afterResync.Do(func() { close(resyncSeen) })
		case e.Kind == deltafifo.KindReplaced:
			select {
			case <-resyncSeen:
				relistOnce.Do(func() { close(relisted) })
			default:
			}
		}
	}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Clock:    clock,
		Trace:    trace,
		Indexers: rejectingBad(),
		OnError:  holdAt("default/b", blocked, unblock),
	})
	var unblockOnce sync.Once
	unblockNow := func() { unblockOnce.Do(func() { close(unblock) }) }
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	t.Cleanup(unblockNow) // runs before runInformer's cleanup waits for Run
	waitSynced(t, inf)
	rec.eventually(t, "add a (initial)")

	// b is rejected: the pop loop waits in OnError, outside the DeltaFIFO.
	_, err = lw.Create(badConfigMap("b"))
	require.NoError(t, err)
	waitClosed(t, blocked, hangGuard, "b's rejection never reached OnError")
	_, err = lw.Create(configMap("x"))
	require.NoError(t, err)
	waitClosed(t, xQueued, hangGuard, "x's ADDED was never queued")

	// t=1s: h is due; the resync replays a (cached); x is not cached.
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	clock.Step(time.Second)
	waitClosed(t, resynced, hangGuard, "the t=1s resync never reached the DeltaFIFO")

	// A relist lists x unchanged.
	lw.Disconnect()
	_, err = lw.Create(configMap("y")) // so that the compaction passes the watch's version: 410, relist
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	waitClosed(t, relisted, hangGuard, "the relist never finished")

	unblockNow()
	_, err = lw.Create(configMap("fence"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s := rec.snapshot()
		return len(s) > 0 && s[len(s)-1] == "add fence"
	}, hangGuard, time.Millisecond, "fence never reached the handler: %q", rec.snapshot())
	assert.Contains(t, rec.snapshot(), "add x")
	assert.NotContains(t, rec.snapshot(), "resync x",
		"x was not cached at the t=1s resync, and the relist found it unchanged: no handler is owed a reminder of it (%q)", rec.snapshot())
}
