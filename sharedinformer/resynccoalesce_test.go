package sharedinformer_test

import (
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

// TestACoalescedTombstoneDoesNotCostAKeyBehindItsResync: a popped key's
// resyncs are told by its oldest delta's number, and the informer drops
// what it recorded for earlier resyncs as keys pop, in order of that
// number. A second delete of a queued key is coalesced into the first,
// in its place and with its number; had it taken the newer number (as
// it did when an adversarial review found it), the key at the front of
// the queue would claim to answer only later resyncs, and its pop would
// forget the handler due at a resync whose Sync for another key, queued
// behind it, was still to be popped.
//
// a is deleted and b made bad (the index rejects it) while the watch is
// down; the relist queues [b, a-tombstone]; b's rejection holds the pop
// loop in OnError, outside the DeltaFIFO's lock, with a queued. The t=1s
// resync (h due) skips a and queues b's Sync behind it. A second relist
// tombstones a again: coalesced, a's only delta keeps resync 0's number.
// Let go, h hears of b's Sync (with the newer number, a's pop forgot h's
// due resync, and b's Sync found no handler owed).
func TestACoalescedTombstoneDoesNotCostAKeyBehindItsResync(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	blocked, unblock := make(chan struct{}), make(chan struct{})
	aTombstoned, resynced, aCoalesced, relistedAfter := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	var tombOnce, resyncOnce, coalOnce, relistOnce sync.Once
	var coalesced atomic.Bool
	trace := func(e informer.TraceEvent) {
		if e.Stage != informer.StageFIFO {
			return
		}
		switch {
		case e.Kind == deltafifo.KindTombstoned && e.Key == "default/a":
			tombOnce.Do(func() { close(aTombstoned) })
		case e.Kind == deltafifo.KindResync:
			resyncOnce.Do(func() { close(resynced) })
		case e.Kind == deltafifo.KindCoalesced && e.Key == "default/a":
			coalesced.Store(true)
			coalOnce.Do(func() { close(aCoalesced) })
		case e.Kind == deltafifo.KindReplaced && coalesced.Load():
			relistOnce.Do(func() { close(relistedAfter) })
		}
	}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Clock:    clock,
		Trace:    trace,
		Indexers: rejectingBad(),
		OnError:  holdAt("default/b", blocked, unblock),
	})
	for _, name := range []string{"a", "b"} {
		_, err := lw.Create(configMap(name))
		require.NoError(t, err)
	}
	rec := &recorder{}
	_, err := inf.AddEventHandler(rec, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	rec.eventually(t, "add a (initial)", "add b (initial)")

	// Outage 1: a deleted, b made bad; history compacted: relist.
	lw.Disconnect()
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	_, err = lw.Update(badConfigMap("b"))
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	waitClosed(t, blocked, hangGuard, "b's rejection never reached OnError")
	waitClosed(t, aTombstoned, hangGuard, "a was never tombstoned")

	// t=1s: h is due; the resync skips a (queued) and queues b's Sync.
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	clock.Step(time.Second)
	waitClosed(t, resynced, hangGuard, "the t=1s resync never reached the DeltaFIFO")

	// Outage 2: relist again; a is tombstoned again, coalesced.
	lw.Disconnect()
	_, err = lw.Create(configMap("fence"))
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	waitClosed(t, aCoalesced, hangGuard, "a's second tombstone was never coalesced")
	waitClosed(t, relistedAfter, hangGuard, "the second relist never finished")

	close(unblock)
	require.Eventually(t, func() bool {
		s := rec.snapshot()
		return len(s) > 0 && s[len(s)-1] == "add fence"
	}, hangGuard, time.Millisecond, "fence never reached the handler: %q", rec.snapshot())
	assert.Contains(t, rec.snapshot(), "resync b",
		"h was due at the t=1s resync, whose Sync of b was still queued: it must be reminded of b once")
}
