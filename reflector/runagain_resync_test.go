package reflector_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// lateClock is a Clock whose timers fire when the test says, and whose
// fired function runs when the test says: as the real clock's, whose
// function runs in a goroutine of its own, which the scheduler may start
// late. Stop reports false once the timer fired, as time.Timer's does.
type lateClock struct {
	mu     sync.Mutex
	timers []*lateTimer
}

type lateTimer struct {
	c              *lateClock
	f              func()
	fired, stopped bool
}

func (c *lateClock) Now() time.Time { return time.Now() }

func (c *lateClock) AfterFunc(_ time.Duration, f func()) informer.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &lateTimer{c: c, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *lateTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired || t.stopped {
		return false
	}
	t.stopped = true
	return true
}

// fire fires the one pending timer, and returns its function, not yet run.
func (c *lateClock) fire(t *testing.T) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pending []*lateTimer
	for _, tm := range c.timers {
		if !tm.fired && !tm.stopped {
			pending = append(pending, tm)
		}
	}
	require.Len(t, pending, 1, "one resync timer pending")
	pending[0].fired = true
	return pending[0].f
}

// pending counts the timers neither fired nor stopped.
func (c *lateClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, tm := range c.timers {
		if !tm.fired && !tm.stopped {
			n++
		}
	}
	return n
}

// streamingLW answers every streaming list with one ConfigMap and the
// end bookmark, and keeps the watch open.
type streamingLW struct{}

func (streamingLW) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	panic("streamingLW only streams")
}

func (streamingLW) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(2, false)
	w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}})
	w.Action(watch.Bookmark, endBookmark("2"))
	return w, nil
}

// Run may be called again once it returned (TestRunTwiceConcurrentlyIsRefused).
// A resync tick of the first Run's timer, fired before that Run stopped it
// but run late (the real clock runs it in a goroutine of its own), is the
// first Run's: it must not reach the second Run, whose resync is due only
// ResyncPeriod after it started. (Found by a review: the timer's function
// read the Reflector's resync channel when it ran, a data race with the
// second Run making its own, and sent the stale tick there; the second
// Run resynced at once and armed a second timer beside its first, so it
// resynced twice every period from then on.)
func TestAResyncTickOfAFinishedRunDoesNotReachTheNextRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock, store := &lateClock{}, newRecorder[*corev1.ConfigMap]()
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: streamingLW{}, Store: store,
			ResyncPeriod: time.Minute, Clock: clock, OnError: (&errorLog{}).hook, Tuning: reflector.Tuning{StreamingList: true}}))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		synctest.Wait()
		require.Equal(t, "2", r.LastSyncResourceVersion(), "the first Run synced")
		late := clock.fire(t) // due, but its goroutine has not run yet
		cancel()
		<-done

		ctx, cancel = context.WithCancel(t.Context())
		done = make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		synctest.Wait()
		require.Equal(t, 1, clock.pending(), "the second Run armed its resync")

		late() // the first Run's tick runs now
		synctest.Wait()
		assert.Zero(t, store.count("resync"), "the first Run's tick resynced the second Run at once")
		assert.Equal(t, 1, clock.pending(), "resync timers pending: the second Run resyncs that many times a period")
		cancel()
		<-done
	})
}
