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

// TestAResyncThatSkippedAKeyWhoseUpdateTheIndexRefusesStillReminds: a
// is cached; its update to a state the index refuses is queued while the
// pop loop is held; the t=1s resync (h due) skips a, which is queued.
// The pop of a applies nothing (the index refuses the update), so no
// change reached the handlers, and h is reminded of a as the cache still
// holds it (doc.go Resync bullet: "each object once for each resync it
// was due at"). Found by an adversarial review: h heard nothing of a.
func TestAResyncThatSkippedAKeyWhoseUpdateTheIndexRefusesStillReminds(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	blocked, unblock := make(chan struct{}), make(chan struct{})
	var unblockOnce sync.Once
	resynced := make(chan struct{})
	var resyncOnce sync.Once
	aQueued := make(chan struct{})
	var aOnce sync.Once
	var armed sync.Once
	armA := make(chan struct{})
	trace := func(e informer.TraceEvent) {
		if e.Stage != informer.StageFIFO {
			return
		}
		switch {
		case e.Kind == deltafifo.KindQueued && e.Key == "default/a":
			select {
			case <-armA:
				aOnce.Do(func() { close(aQueued) })
			default:
			}
		case e.Kind == deltafifo.KindResync:
			resyncOnce.Do(func() { close(resynced) })
		}
	}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Clock:    clock,
		Trace:    trace,
		Indexers: rejectingBad(),
		OnError:  holdAt("default/b", blocked, unblock),
	})
	unblockNow := func() { unblockOnce.Do(func() { close(unblock) }) }
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	t.Cleanup(unblockNow)
	waitSynced(t, inf)
	rec.eventually(t, "add a (initial)")

	_, err = lw.Create(badConfigMap("b"))
	require.NoError(t, err)
	waitClosed(t, blocked, hangGuard, "b's rejection never reached OnError")
	armed.Do(func() { close(armA) })
	_, err = lw.Update(badConfigMap("a"))
	require.NoError(t, err)
	waitClosed(t, aQueued, hangGuard, "a's update was never queued")

	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	clock.Step(time.Second)
	waitClosed(t, resynced, hangGuard, "the t=1s resync never reached the DeltaFIFO")

	unblockNow()
	_, err = lw.Create(configMap("fence"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		s := rec.snapshot()
		return len(s) > 0 && s[len(s)-1] == "add fence"
	}, hangGuard, time.Millisecond, "fence never reached the handler: %q", rec.snapshot())
	cached, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	require.Empty(t, cached.Data["bad"], "the index refused a's update: the cache keeps a as it was")
	assert.Contains(t, rec.snapshot(), "resync a",
		"h was due at the t=1s resync, which skipped a while its (refused) update was queued; the cache still holds a, yet h heard nothing of it (%q)", rec.snapshot())
}
