package reflector_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// These tests run the protocol against memlistwatch, which provokes each
// situation exactly; integration_*_test.go prove the same against a real
// kube-apiserver.

// The in-memory ListerWatcher fits the interface by shape alone.
var _ reflector.ListerWatcher[*corev1.ConfigMap] = (*memlistwatch.ListerWatcher[*corev1.ConfigMap])(nil)

type memFixture struct {
	lw    *memlistwatch.ListerWatcher[*corev1.ConfigMap]
	spy   *spy[*corev1.ConfigMap]
	store *recorder[*corev1.ConfigMap]
	errs  *errorLog
	trace *traceLog
	r     *reflector.Reflector[*corev1.ConfigMap]
	stop  func()
}

// startMem creates n ConfigMaps, then runs a reflector over them and waits
// until it is watching. tweak adjusts the options first.
func startMem(t *testing.T, n int, tweak func(*reflector.Options[*corev1.ConfigMap])) *memFixture {
	t.Helper()
	f := &memFixture{lw: memlistwatch.New[*corev1.ConfigMap](), store: newRecorder[*corev1.ConfigMap](), errs: &errorLog{}, trace: &traceLog{}}
	for i := range n {
		_, err := f.lw.Create(cm("default", fmt.Sprintf("cm-%02d", i)))
		require.NoError(t, err)
	}
	f.spy = &spy[*corev1.ConfigMap]{inner: f.lw}
	opts := fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: f.spy, Store: f.store, OnError: f.errs.hook, Trace: f.trace.hook})
	if tweak != nil {
		tweak(&opts)
	}
	f.r = must(reflector.New(opts))
	f.stop = run(t, f.r)
	f.waitSynced(t)
	return f
}

// waitSynced waits until the reflector has seen every write and watches.
func (f *memFixture) waitSynced(t *testing.T) {
	t.Helper()
	eventually(t, func() bool {
		return f.r.LastSyncResourceVersion() == f.lw.ResourceVersion() && f.lw.Stats().OpenWatches > 0
	}, "the reflector never caught up with rv %s (it is at %q)", f.lw.ResourceVersion(), f.r.LastSyncResourceVersion())
}

func key(name string) informer.Key { return informer.Key{Namespace: "default", Name: name} }

func TestListsInPagesAndReplacesOnceWithTheWholeList(t *testing.T) {
	f := startMem(t, 5, func(o *reflector.Options[*corev1.ConfigMap]) { o.PageSize = 2 })
	lists := f.spy.listCalls()
	require.Len(t, lists, 3, "5 objects in pages of 2")
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "", Limit: 2}, lists[0], "the first page: a consistent read")
	assert.Empty(t, lists[1].ResourceVersion, "later pages carry only the continue token")
	assert.NotEmpty(t, lists[1].Continue)
	require.Equal(t, 1, f.store.count("replace"), "one Replace, after the last page")
	assert.Len(t, f.store.replaces()[0], 5)
	assert.Equal(t, "6", f.r.LastSyncResourceVersion())
	assert.Len(t, f.trace.of(reflector.KindList), 3, "one trace event per page")
}

func TestInitialListAnyAsksForResourceVersionZero(t *testing.T) {
	f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) { o.InitialList = reflector.ListAny })
	assert.Equal(t, "0", f.spy.listCalls()[0].ResourceVersion)
}

func TestWatchStartsFromTheListsResourceVersionWithBookmarksAndATimeout(t *testing.T) {
	f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.WatchTimeout = 10 * time.Second
		o.WatchTimeoutJitter = 0.5
	})
	w := f.spy.watchCalls()[0]
	assert.Equal(t, "3", w.ResourceVersion)
	assert.True(t, w.AllowWatchBookmarks)
	require.NotNil(t, w.TimeoutSeconds)
	assert.GreaterOrEqual(t, *w.TimeoutSeconds, int64(10))
	assert.LessOrEqual(t, *w.TimeoutSeconds, int64(15))
}

func TestEveryEventAdvancesTheResourceVersionAndReachesTheStore(t *testing.T) {
	f := startMem(t, 1, nil)
	a, err := f.lw.Update(cm("default", "cm-00"))
	require.NoError(t, err)
	_, err = f.lw.Create(cm("default", "new"))
	require.NoError(t, err)
	require.NoError(t, f.lw.Delete(key("cm-00")))
	f.waitSynced(t)
	assert.Equal(t, map[string]string{"default/new": "4"}, f.store.state())
	assert.Equal(t, 1, f.store.count("update"))
	assert.Equal(t, 1, f.store.count("add"))
	assert.Equal(t, 1, f.store.count("delete"))
	rvs := f.trace.of(reflector.KindResourceVersion)
	require.Len(t, rvs, 4, "the list's, then one per event")
	assert.Equal(t, a.ResourceVersion, rvs[1].ResourceVersion)
}

func TestWatchEndingNormallyResumesFromTheLastResourceVersionWithoutRelist(t *testing.T) {
	f := startMem(t, 2, nil)
	_, err := f.lw.Create(cm("default", "x"))
	require.NoError(t, err)
	f.waitSynced(t)
	for range 3 {
		require.Equal(t, 1, f.lw.DropWatches())
		_, err := f.lw.Create(cm("default", fmt.Sprintf("after-drop-%s", f.lw.ResourceVersion())))
		require.NoError(t, err)
		f.waitSynced(t)
	}
	assert.Equal(t, 1, f.lw.Stats().Lists, "no relist: the watch resumed where it was")
	assert.Equal(t, 1, f.store.count("replace"))
	watches := f.spy.watchCalls()
	require.Len(t, watches, 4)
	assert.Equal(t, "4", watches[1].ResourceVersion, "the re-watch starts at the last event seen")
	assert.Len(t, f.store.state(), 6)
}

func TestExpiredWatchRelistsConsistentlyAndNeverAtTheOldResourceVersion(t *testing.T) {
	f := startMem(t, 2, nil)
	f.lw.Disconnect()
	require.NoError(t, f.lw.Delete(key("cm-00")))
	_, err := f.lw.Create(cm("default", "c"))
	require.NoError(t, err)
	f.lw.Compact()
	f.lw.Reconnect()
	f.waitSynced(t)

	assert.Equal(t, map[string]string{"default/cm-01": "3", "default/c": "5"}, f.store.state())
	assert.Equal(t, [][]string{{"default/cm-00", "default/cm-01"}, {"default/c", "default/cm-01"}}, f.store.replaces(),
		"the relist's Replace lacks the object deleted while the watch was down")
	lists := f.spy.listCalls()
	require.Len(t, lists, 2)
	assert.Equal(t, "", lists[1].ResourceVersion, "the relist is consistent, never at the expired resourceVersion")
	for _, w := range f.spy.watchCalls()[2:] {
		assert.NotEqual(t, "3", w.ResourceVersion, "no WATCH from the expired resourceVersion after the 410")
	}
	assert.Equal(t, 1, f.errs.count(apierrors.IsResourceExpired), "the 410 is reported")
	relists := f.trace.of(reflector.KindRelist)
	require.Len(t, relists, 1)
	assert.Contains(t, relists[0].Detail, "410")
	assert.Equal(t, reflector.CauseExpired, relists[0].Reason, "the cause, for machines")
}

// expiringOnce is a paged collection of five ConfigMaps whose continue
// token expires once, between the first and second page.
func expiringOnce(t *testing.T) (*memlistwatch.ListerWatcher[*corev1.ConfigMap], *spy[*corev1.ConfigMap]) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	for i := range 5 {
		_, err := lw.Create(cm("default", fmt.Sprintf("cm-%d", i)))
		require.NoError(t, err)
	}
	s := &spy[*corev1.ConfigMap]{inner: lw}
	s.onList = func(call int, _ metav1.ListOptions) error {
		if call == 2 { // between the first and second page
			_, _ = lw.Create(cm("default", "late"))
			lw.Compact()
		}
		return nil
	}
	return lw, s
}

func TestContinueTokenExpiryRestartsTheListFromTheFirstPage(t *testing.T) {
	lw, s := expiringOnce(t)
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store,
		Tuning: reflector.Tuning{PageSize: 2, ExpiredContinueLimit: 2}, OnError: errs.hook})))
	run(t, r)
	eventually(t, func() bool { return r.LastSyncResourceVersion() == lw.ResourceVersion() }, "never synced")

	lists := s.listCalls()
	require.GreaterOrEqual(t, len(lists), 5)
	assert.NotEmpty(t, lists[1].Continue, "the second page used the token...")
	assert.Equal(t, metav1.ListOptions{Limit: 2}, lists[2], "...which had expired, so the list starts over, consistent")
	require.Equal(t, 1, store.count("replace"), "the half list never reached the store")
	assert.Len(t, store.replaces()[0], 6)
	assert.Equal(t, 1, errs.count(apierrors.IsResourceExpired))
}

func TestExpiredContinueTokensAtTheLimitGiveOneUnpagedList(t *testing.T) {
	lw, s := expiringOnce(t)
	store := newRecorder[*corev1.ConfigMap]()
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store,
		Tuning: reflector.Tuning{PageSize: 2}, OnError: (&errorLog{}).hook})))
	run(t, r)
	eventually(t, func() bool { return r.LastSyncResourceVersion() == lw.ResourceVersion() }, "never synced")

	lists := s.listCalls()
	require.Len(t, lists, 3, "page 1, page 2 (expired), then the whole list")
	assert.Equal(t, metav1.ListOptions{}, lists[2], "consistent, and without a limit: the default limit is one expiry")
	require.Equal(t, 1, store.count("replace"))
	assert.Len(t, store.replaces()[0], 6)
}

func TestTooLargeResourceVersionOnWatchRelistsConsistently(t *testing.T) {
	var tooLarge error
	f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) {
		s := o.ListerWatcher.(*spy[*corev1.ConfigMap])
		s.onWatch = func(call int, opts metav1.ListOptions) (watch.Interface, error) {
			if call == 1 {
				// What a restarted apiserver says while its cache catches up.
				_, tooLarge = s.inner.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "99"})
				return nil, tooLarge
			}
			return nil, nil
		}
	})
	require.True(t, apierrors.HasStatusCause(tooLarge, metav1.CauseTypeResourceVersionTooLarge), "%v", tooLarge)
	lists := f.spy.listCalls()
	require.Len(t, lists, 2, "the first list, then a relist")
	assert.Equal(t, "", lists[1].ResourceVersion)
	assert.Contains(t, f.trace.of(reflector.KindRelist)[0].Detail, "too large")
	assert.Equal(t, reflector.CauseTooLarge, f.trace.of(reflector.KindRelist)[0].Reason)
}

// A watch event older than the list the store is in sync with means the
// server went back in time: the event is skipped, not applied, the
// failure is reported as ErrResourceVersionWentBack, and the reflector
// relists (cause went-back) instead of going on from a state it cannot
// trust.
func TestAnEventWhoseResourceVersionGoesBackIsSkippedReportedAndRelisted(t *testing.T) {
	old := watch.NewFake()
	f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.ShortWatch = time.Nanosecond
	})
	before := f.store.state()
	f.spy.onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
		if call == 2 {
			return old, nil
		}
		return nil, nil
	}
	f.lw.DropWatches() // the second WATCH is the one that goes back
	stale := cm("default", "cm-00")
	stale.ResourceVersion = "1"
	stale.Data = map[string]string{"v": "from the past"}
	old.Modify(stale)

	eventually(t, func() bool { return len(f.trace.of(reflector.KindRelist)) == 1 }, "never relisted")
	assert.Equal(t, reflector.CauseWentBack, f.trace.of(reflector.KindRelist)[0].Reason)
	assert.Equal(t, 1, f.errs.count(is(reflector.ErrResourceVersionWentBack)), "%v", f.errs.all())
	f.waitSynced(t)
	assert.Equal(t, 2, f.store.count("replace"), "the first list, then the relist")
	assert.Zero(t, f.store.count("update"), "the event from the past was never applied")
	assert.Equal(t, before, f.store.state(), "the store is as the lists had it")
}
