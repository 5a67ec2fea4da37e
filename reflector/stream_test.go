package reflector_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

func streamingOn(o *reflector.Options[*corev1.ConfigMap]) { o.StreamingList = true }

func TestStreamingListReplacesOnceThenWatchesOnTheSameStream(t *testing.T) {
	f := startMem(t, 3, streamingOn)
	_, err := f.lw.Create(cm("default", "later"))
	require.NoError(t, err)
	f.waitSynced(t)

	assert.Equal(t, 0, f.lw.Stats().Lists, "no LIST at all")
	assert.Equal(t, 1, f.lw.Stats().Watches, "the stream that delivered the list goes on as the watch")
	w := f.spy.watchCalls()[0]
	require.NotNil(t, w.SendInitialEvents)
	assert.True(t, *w.SendInitialEvents)
	assert.Equal(t, metav1.ResourceVersionMatchNotOlderThan, w.ResourceVersionMatch)
	assert.Equal(t, "", w.ResourceVersion, "the newest state, as a consistent list")
	assert.True(t, w.AllowWatchBookmarks)

	assert.Equal(t, [][]string{{"default/cm-00", "default/cm-01", "default/cm-02"}}, f.store.replaces(),
		"the initial events reach the store as one Replace, not as Adds")
	assert.Equal(t, 1, f.store.count("add"), "only the later creation is an Add")
	ends := f.trace.of(reflector.KindBookmark)
	require.Len(t, ends, 1)
	assert.Equal(t, "initial events end", ends[0].Detail)
	assert.Equal(t, "4", ends[0].ResourceVersion)
}

func TestStreamingListFallsBackToListWhenRefused(t *testing.T) {
	f := startMem(t, 0, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.StreamingList = true
		o.ListerWatcher.(*spy[*corev1.ConfigMap]).inner.(interface{ RefuseStreamingLists() }).RefuseStreamingLists()
	})
	assert.Equal(t, 1, f.lw.Stats().Lists)
	assert.Len(t, f.trace.of(reflector.KindFallback), 1)
	assert.Empty(t, f.errs.all(), "a refusal is an answer, not a failure")

	// A relist after 410 does not try streaming again.
	f.lw.Disconnect()
	_, err := f.lw.Create(cm("default", "a"))
	require.NoError(t, err)
	_, err = f.lw.Create(cm("default", "b"))
	require.NoError(t, err)
	f.lw.Compact()
	f.lw.Reconnect()
	f.waitSynced(t)
	assert.Equal(t, 2, f.lw.Stats().Lists)
	streams := 0
	for _, w := range f.spy.watchCalls() {
		if w.SendInitialEvents != nil {
			streams++
		}
	}
	assert.Equal(t, 1, streams)
}

func TestStreamingListIsUsedAgainForARelist(t *testing.T) {
	f := startMem(t, 2, streamingOn)
	f.lw.Disconnect()
	_, err := f.lw.Create(cm("default", "a"))
	require.NoError(t, err)
	_, err = f.lw.Create(cm("default", "b"))
	require.NoError(t, err)
	f.lw.Compact()
	f.lw.Reconnect()
	f.waitSynced(t)
	assert.Equal(t, 0, f.lw.Stats().Lists)
	assert.Len(t, f.store.replaces(), 2)
	assert.Len(t, f.store.state(), 4)
}

func TestWrongTypeWatchEventsAreReportedAndSkipped(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, err := lw.Create(cm("default", "a")) // rv 2
	require.NoError(t, err)
	s := &spy[*corev1.ConfigMap]{inner: lw}
	s.onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
		w := watch.NewFakeWithChanSize(4, false)
		w.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s", ResourceVersion: "3"}})
		var typedNil *corev1.ConfigMap
		w.Modify(typedNil)
		w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "good", ResourceVersion: "4"}})
		return w, nil // and it stays open
	}
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store, OnError: errs.hook}))
	run(t, r)

	eventually(t, func() bool { return r.LastSyncResourceVersion() == "4" }, "the good event was not applied")
	assert.Equal(t, 2, errs.count(is(reflector.ErrUnexpectedObject)), "the Secret and the typed nil: %v", errs.all())
	assert.Contains(t, store.state(), "default/good")
	assert.Equal(t, 1, store.count("add"), "nothing else reached the store")
	assert.Len(t, s.watchCalls(), 1, "bad events do not end the watch")
}

// In a synctest bubble, so that "a second" is a second of the reflector's
// own backoff timers, not of a machine that may be too busy to retry.
func TestAWatchThatClosesAtOnceIsAFailureWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.BackoffInitial = 10 * time.Millisecond
			o.BackoffMax = 100 * time.Millisecond
			s := o.ListerWatcher.(*spy[*corev1.ConfigMap])
			s.onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
				if call == 1 {
					return nil, nil // one real watch, so startMem sees it open
				}
				return watch.NewEmptyWatch(), nil // what rest returns after a dropped connection
			}
		})
		f.lw.DropWatches()
		start := len(f.spy.watchCalls())
		time.Sleep(time.Second)
		synctest.Wait()
		watches := len(f.spy.watchCalls()) - start
		// Waits of at least 10, 20, 40, 80, then 100ms: no more than ~13 in a
		// second. Without the backoff it would be thousands.
		assert.LessOrEqual(t, watches, 20, "watches in 1s")
		assert.GreaterOrEqual(t, watches, 3, "it keeps trying")
		assert.GreaterOrEqual(t, f.errs.count(is(reflector.ErrShortWatch)), watches-1)
		assert.Equal(t, 1, f.lw.Stats().Lists, "an empty watch is not a reason to relist")
	})
}
