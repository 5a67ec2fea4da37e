package memlistwatch_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
)

// next returns the next event, failing the test if none comes within a
// minute (a guard against a hang, not a timing) or the watch ends.
func next(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "the watch ended")
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
		return watch.Event{}
	}
}

// requireEnded fails the test unless w's channel closes within a minute
// (a guard against a hang, not a timing).
func requireEnded(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.False(t, ok, "expected the end of the watch, got %v", ev.Type)
	case <-time.After(time.Minute):
		t.Fatal("the watch did not end within a minute")
	}
}

func describe(ev watch.Event) string {
	obj := ev.Object.(*corev1.ConfigMap)
	return string(ev.Type) + " " + obj.Name + "@" + obj.ResourceVersion
}

func TestWatchFromAResourceVersionReplaysTheWritesSinceThen(t *testing.T) {
	lw := newCollection(t, "a", "b") // rv 2, 3
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	assert.Equal(t, "ADDED b@3", describe(next(t, w)), "replayed from history")
	assert.Equal(t, "DELETED a@4", describe(next(t, w)), "then live, with the deletion's resourceVersion")
}

func TestWatchFromEmptyResourceVersionStartsWithSyntheticAdds(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		lw := newCollection(t, "b", "a")
		w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: rv})
		require.NoError(t, err)
		assert.Equal(t, "ADDED a@3", describe(next(t, w)), "rv=%q: in key order", rv)
		assert.Equal(t, "ADDED b@2", describe(next(t, w)))
		w.Stop()
	}
}

func TestWatchFromACompactedResourceVersionGetsOne410EventAndEnds(t *testing.T) {
	lw := newCollection(t, "a", "b", "c")
	lw.Compact()
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err, "like kube-apiserver, the request succeeds and the 410 comes as an event")
	ev := next(t, w)
	require.Equal(t, watch.Error, ev.Type)
	status, ok := ev.Object.(*metav1.Status)
	require.True(t, ok, "an ERROR event carries a Status, not a T: %T", ev.Object)
	assert.EqualValues(t, 410, status.Code)
	assert.Equal(t, metav1.StatusReasonExpired, status.Reason)
	requireEnded(t, w)

	w, err = lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "4"})
	require.NoError(t, err)
	defer w.Stop()
	_, err = lw.Create(configMap("d"))
	require.NoError(t, err)
	assert.Equal(t, "ADDED d@5", describe(next(t, w)), "a watch from the compaction point works")
}

func TestWatchFromTheFutureAnswersTooLargeResourceVersion(t *testing.T) {
	lw := newCollection(t, "a")
	_, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "50"})
	assert.True(t, apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge), "%v", err)
}

func TestStreamingListEndsItsInitialEventsWithAnAnnotatedBookmark(t *testing.T) {
	lw := newCollection(t, "a", "b")
	w, err := lw.Watch(context.Background(), metav1.ListOptions{
		SendInitialEvents:    yes(),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	require.NoError(t, err)
	defer w.Stop()
	assert.Equal(t, "ADDED a@2", describe(next(t, w)))
	assert.Equal(t, "ADDED b@3", describe(next(t, w)))
	end := next(t, w)
	require.Equal(t, watch.Bookmark, end.Type)
	obj := end.Object.(*corev1.ConfigMap)
	assert.Equal(t, "3", obj.ResourceVersion)
	assert.Equal(t, "true", obj.Annotations[metav1.InitialEventsAnnotationKey])
}

func TestStreamingListNeedsNotOlderThanAndBookmarks(t *testing.T) {
	lw := newCollection(t, "a")
	_, err := lw.Watch(context.Background(), metav1.ListOptions{SendInitialEvents: yes()})
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
}

func TestRefusedStreamingListAnswers422(t *testing.T) {
	lw := newCollection(t, "a")
	lw.RefuseStreamingLists()
	_, err := lw.Watch(context.Background(), metav1.ListOptions{
		SendInitialEvents:    yes(),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err, "plain watches still work")
	w.Stop()
}

func TestBookmarkReachesOnlyWatchesThatAllowedThem(t *testing.T) {
	lw := newCollection(t, "a")
	with, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2", AllowWatchBookmarks: true})
	require.NoError(t, err)
	defer with.Stop()
	without, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	defer without.Stop()

	assert.Equal(t, 1, lw.Bookmark())
	ev := next(t, with)
	assert.Equal(t, watch.Bookmark, ev.Type)
	assert.Equal(t, "2", ev.Object.(*corev1.ConfigMap).ResourceVersion)
	select {
	case ev := <-without.ResultChan():
		t.Fatalf("a watch without allowWatchBookmarks got %v", ev.Type)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestDropWatchesEndsOpenWatches(t *testing.T) {
	lw := newCollection(t, "a")
	w1, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	w2, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	assert.Equal(t, 2, lw.DropWatches())
	requireEnded(t, w1)
	requireEnded(t, w2)
	assert.Equal(t, 0, lw.DropWatches(), "ended watches are forgotten")
	assert.Equal(t, 2, lw.Stats().Watches)
}

func TestWatchEndsAfterItsTimeoutOrItsContext(t *testing.T) {
	lw := newCollection(t, "a")
	start := time.Now() // before Watch: its timer starts inside, so a slow return cannot shorten what we measure
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2", TimeoutSeconds: oneSecond()})
	require.NoError(t, err)
	requireEnded(t, w)
	assert.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	w, err = lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	cancel()
	requireEnded(t, w)
}

func TestDisconnectMakesCallsWaitUntilReconnect(t *testing.T) {
	lw := newCollection(t, "a")
	open, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)
	lw.Disconnect()
	requireEnded(t, open)

	got := make(chan error, 1)
	go func() {
		_, _, err := lw.List(context.Background(), metav1.ListOptions{})
		got <- err
	}()
	_, err = lw.Create(configMap("b"))
	require.NoError(t, err, "the server still takes writes")
	select {
	case <-got:
		t.Fatal("a LIST was answered while disconnected")
	case <-time.After(100 * time.Millisecond):
	}
	lw.Reconnect()
	require.NoError(t, <-got)

	lw.Disconnect()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = lw.Watch(ctx, metav1.ListOptions{})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a waiting call ends with its context")
	lw.Reconnect()
}

func TestASlowWatcherNeverBlocksWriters(t *testing.T) {
	lw := newCollection(t)
	w, err := lw.Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)
	defer w.Stop()
	for i := range 1000 {
		_, err := lw.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%04d", i)}})
		require.NoError(t, err)
	}
	for i := range 1000 {
		ev := next(t, w)
		require.Equal(t, watch.Added, ev.Type, "event %d", i)
		require.Equal(t, fmt.Sprint(i+2), ev.Object.(*corev1.ConfigMap).ResourceVersion, "in resourceVersion order")
	}
}

// Every way a watch ends (Stop, its context, its timeout, DropWatches,
// Disconnect, the 410 after a compaction) ends its goroutine too, even
// with events still queued that nobody reads. synctest.Test fails if a
// goroutine of its bubble is still blocked when the function returns.
func TestAWatchsGoroutineEndsWithTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := newCollection(t, "a", "b", "c") // rv 2, 3, 4
		open := func(ctx context.Context, opts metav1.ListOptions) watch.Interface {
			w, err := lw.Watch(ctx, opts)
			require.NoError(t, err)
			return w
		}
		drain := func(w watch.Interface) int {
			n := 0
			for range w.ResultChan() {
				n++
			}
			return n
		}
		from2 := metav1.ListOptions{ResourceVersion: "2"} // two events queued

		stopped := open(t.Context(), from2)
		stopped.Stop()
		drain(stopped)

		ctx, cancel := context.WithCancel(t.Context())
		cancelled := open(ctx, from2)
		cancel()
		drain(cancelled)

		timedOut := open(t.Context(), metav1.ListOptions{ResourceVersion: "2", TimeoutSeconds: oneSecond()})
		time.Sleep(time.Second)
		drain(timedOut)

		dropped := open(t.Context(), from2)
		assert.Equal(t, 1, lw.DropWatches())
		drain(dropped)

		disconnected := open(t.Context(), from2)
		lw.Disconnect()
		drain(disconnected)
		lw.Reconnect()

		lw.Compact()
		expired := open(t.Context(), from2)
		assert.Equal(t, 1, drain(expired), "one 410 event, then the end")
	})
}

func yes() *bool { b := true; return &b }

func oneSecond() *int64 { s := int64(1); return &s }
