package sharedinformer_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// resyncCounter counts a handler's resyncs (OnUpdate with old == new)
// of the object "a". With fences set, it sends there the name of every
// other object added: one created after a tick reaches the handler after
// that tick's resyncs, so the count is then exact.
type resyncCounter struct {
	n      atomic.Int64
	fences chan string
}

func (c *resyncCounter) handler() sharedinformer.HandlerFuncs[*corev1.ConfigMap] {
	return sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			if c.fences != nil && obj.Name != "a" {
				c.fences <- obj.Name
			}
		},
		UpdateFunc: func(old, obj *corev1.ConfigMap) {
			if old == obj && obj.Name == "a" {
				c.n.Add(1)
			}
		},
	}
}

// A handler with a 1.5s period on an informer whose resync check ticks
// every 1s (its other handler's period) is due at the 2nd tick, then 2s
// after each resync: never after less than 1.5s, at most one tick late.
// The fake clock moves only when the test says, so the count after each
// tick is exact.
func TestAHandlerIsNeverResyncedMoreOftenThanItsPeriod(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	every, slower := &resyncCounter{}, &resyncCounter{}
	_, err = inf.AddEventHandler(every.handler(), sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	_, err = inf.AddEventHandler(slower.handler(), sharedinformer.HandlerOptions{ResyncPeriod: 1500 * time.Millisecond})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	for tick := int64(1); tick <= 8; tick++ {
		// The reflector arms the next tick only after its Resync returns,
		// which may be after the handlers saw the last one: stepResync
		// waits for the timer, so no Step passes with nothing to fire.
		want := tick / 2 // due at ticks 2, 4, 6, 8
		stepResync(t, clock, time.Second, func() bool { return every.n.Load() == tick && slower.n.Load() == want },
			"after tick %d: want %d and %d resyncs", tick, tick, want)
	}
	assert.EqualValues(t, 4, slower.n.Load(), "4 resyncs in 8s for a 1.5s period: never more often than asked")
}

// The reflector's resync tick is fixed by Run, from the handlers
// registered before it. A handler added later cannot make it tick
// faster: asking for resync of an informer that runs without one is an
// error, and a late handler asking for 1s on an informer ticking every
// 2s is resynced once a tick, not once a second.
func TestAHandlerAddedAfterRunIsResyncedAtMostOnceATickOfThoseRegisteredBefore(t *testing.T) {
	without, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	runInformer(t, without)
	waitSynced(t, without)
	_, err := without.AddEventHandler((&resyncCounter{}).handler(), sharedinformer.HandlerOptions{Name: "late", ResyncPeriod: time.Second})
	assert.ErrorContains(t, err, `handler "late" asks for resync, but the informer runs without one`)

	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock})
	_, err = lw.Create(configMap("a"))
	require.NoError(t, err)
	early := &resyncCounter{}
	_, err = inf.AddEventHandler(early.handler(), sharedinformer.HandlerOptions{ResyncPeriod: 2 * time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "no resync tick armed")
	clock.Step(time.Second) // halfway to the first tick, at 2s

	// The late handler asks for 1s and gets the ticks' 2s: first due at
	// 3s, so the tick at 2s passes it by.
	late := &resyncCounter{fences: make(chan string, 1)}
	_, err = inf.AddEventHandler(late.handler(), sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	step := time.Second // to the first tick, then a tick at a time
	for tick, want := range []int64{0, 1, 2} {
		stepResync(t, clock, step, func() bool { return early.n.Load() == int64(tick+1) },
			"after tick %d: want %d resyncs of the early handler, have %d", tick+1, tick+1, early.n.Load())
		step = 2 * time.Second
		fence := fmt.Sprint("fence-", tick)
		_, err = lw.Create(configMap(fence))
		require.NoError(t, err)
		require.Equal(t, fence, <-late.fences)
		assert.Equal(t, want, late.n.Load(), "after the tick at %ds: the late handler, registered at 1s, is due every 2s from 3s", 2*(tick+1))
	}
}
