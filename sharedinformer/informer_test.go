package sharedinformer_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

func TestAHandlerReadingTheListerAlreadySeesTheChangeItIsToldAbout(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	seen := make(chan string, 10)
	_, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			cached, err := inf.Lister().Namespace(obj.Namespace).Get(obj.Name)
			if err != nil {
				seen <- "missing"
				return
			}
			seen <- cached.ResourceVersion
		},
	}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	created, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, <-seen)
}

func TestEveryHandlerGetsAddUpdateAndDeleteInOrder(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("before"))
	a, b := &recorder{}, &recorder{}
	regA, err := inf.AddEventHandler(a, sharedinformer.HandlerOptions{Name: "a"})
	require.NoError(t, err)
	regB, err := inf.AddEventHandler(b, sharedinformer.HandlerOptions{Name: "b"})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf, regA, regB)

	_, _ = lw.Create(configMap("x"))
	changed := configMap("x")
	changed.Data["v"] = "2"
	_, _ = lw.Update(changed)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "x"}))

	want := []string{"add before (initial)", "add x", "update x", "delete x"}
	a.eventually(t, want...)
	b.eventually(t, want...)
}

func TestALateHandlerGetsTheCacheReplayedAsItsInitialList(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("one"))
	_, _ = lw.Create(configMap("two"))
	runInformer(t, inf)
	waitSynced(t, inf)

	release := make(chan struct{})
	late := &recorder{}
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, initial bool) { <-release; late.OnAdd(obj, initial) },
	}, sharedinformer.HandlerOptions{Name: "late"})
	require.NoError(t, err)
	assert.False(t, reg.HasSynced(), "its replay has not been handled yet")
	close(release)
	waitSynced(t, reg)
	assert.ElementsMatch(t, []string{"add one (initial)", "add two (initial)"}, late.snapshot())

	_, _ = lw.Create(configMap("three"))
	require.Eventually(t, func() bool { return len(late.snapshot()) == 3 }, hangGuard, time.Millisecond)
	assert.Equal(t, "add three", late.snapshot()[2], "after the replay, changes arrive as usual")
}

func TestARemovedHandlerGetsNothingMore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	rec := &recorder{}
	reg, err := inf.AddEventHandler(rec, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	waitSynced(t, inf)
	_, _ = lw.Create(configMap("a"))
	rec.eventually(t, "add a")
	require.NoError(t, inf.RemoveEventHandler(reg))
	assert.Error(t, inf.RemoveEventHandler(reg), "removing twice is reported")
	_, _ = lw.Create(configMap("b"))
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, []string{"add a"}, rec.snapshot())
	assert.Zero(t, reg.Depth())
}

func TestResyncRemindsOnlyHandlersWhosePeriodElapsedAndMakesNoRequest(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Now()) // two periods pass without waiting for them
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock})
	_, _ = lw.Create(configMap("a"))
	fast, never := &recorder{}, &recorder{}
	_, err := inf.AddEventHandler(fast, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	_, err = inf.AddEventHandler(never, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	// Synced means listed; the WATCH opens just after. Count from then.
	require.Eventually(t, func() bool { return lw.Stats().OpenWatches == 1 }, hangGuard, time.Millisecond)
	before := lw.Stats()

	for period := 1; period <= 2; period++ {
		stepResync(t, clock, time.Second, func() bool { return len(fast.snapshot()) == 1+period }, "period %d", period)
	}
	assert.Equal(t, []string{"add a (initial)", "resync a", "resync a"}, fast.snapshot())
	assert.Equal(t, []string{"add a (initial)"}, never.snapshot())
	assert.Equal(t, before, lw.Stats(), "a resync replays the cache: no LIST, no WATCH")
}

func TestAResyncPeriodBelowTheMinimumIsAnError(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, err := inf.AddEventHandler(&recorder{}, sharedinformer.HandlerOptions{Name: "eager", ResyncPeriod: time.Millisecond})
	assert.ErrorContains(t, err, `resync period 1ms of handler "eager" is below the minimum 1s`)
	_, err = inf.AddEventHandler(nil, sharedinformer.HandlerOptions{})
	assert.ErrorContains(t, err, "the handler is nil")
}

func TestTransformRunsBeforeTheCacheAndOnlyBeforeRun(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	withFields := configMap("a")
	withFields.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	_, _ = lw.Create(withFields)
	require.NoError(t, inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		cm.ManagedFields = nil
		return cm, nil
	}))
	runInformer(t, inf)
	waitSynced(t, inf)
	cached, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Nil(t, cached.ManagedFields)
	assert.Error(t, inf.SetTransform(nil), "the cache already holds transformed objects")
}

func TestAPanickingHandlerIsReportedAndTheInformerGoesOn(t *testing.T) {
	reported := make(chan error, 10)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{OnError: func(err error) { reported <- err }})
	_, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			if obj.Name == "bad" {
				panic("handler bug")
			}
		},
	}, sharedinformer.HandlerOptions{Name: "fragile"})
	require.NoError(t, err)
	healthy := &recorder{}
	_, err = inf.AddEventHandler(healthy, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	_, _ = lw.Create(configMap("bad"))
	_, _ = lw.Create(configMap("good"))
	healthy.eventually(t, "add bad", "add good")
	assert.ErrorContains(t, <-reported, "handler fragile panicked on add of default/bad: handler bug")
}

func TestADeleteMissedDuringAnOutageArrivesWithFinalStateUnknown(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("doomed"))
	rec := &recorder{}
	_, err := inf.AddEventHandler(rec, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	rec.eventually(t, "add doomed (initial)")

	lw.Disconnect() // the watch breaks; the delete below is never streamed
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "doomed"}))
	lw.Compact() // and the history that would replay it is gone: 410, relist
	lw.Reconnect()
	rec.eventually(t, "add doomed (initial)", "delete doomed (final state unknown)")
}

// Pitfall 1, the failure itself: what happens while the watch is down
// and history is compacted is never streamed. An object created and
// deleted in the outage is never heard of at all; one deleted in it is
// heard of only as absent from the relist, a delete whose final state is
// unknown.
func TestAnObjectCreatedAndDeletedDuringAnOutageIsNeverSeen(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("doomed"))
	rec := &recorder{}
	_, err := inf.AddEventHandler(rec, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	rec.eventually(t, "add doomed (initial)")

	lw.Disconnect()
	_, err = lw.Create(configMap("ephemeral"))
	require.NoError(t, err)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "ephemeral"}))
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "doomed"}))
	_, err = lw.Create(configMap("survivor")) // the relist that shows it also shows the rest
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()

	require.Eventually(t, func() bool { return len(rec.snapshot()) == 3 }, hangGuard, 5*time.Millisecond, "calls: %q", rec.snapshot())
	assert.ElementsMatch(t, []string{"add doomed (initial)", "delete doomed (final state unknown)", "add survivor"}, rec.snapshot(),
		"ephemeral was never heard of, and doomed's delete only as an absence")
}

func TestAHandlerThatMutatesTheCacheIsCaughtByTheMutationDetector(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{DetectMutations: true})
	mutated := make(chan struct{})
	_, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			obj.Data["v"] = "changed in place" // the bug: this is the cache's object
			close(mutated)
		},
	}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	_, _ = lw.Create(configMap("victim"))
	<-mutated
	err = inf.Indexer().CheckMutations()
	assert.ErrorContains(t, err, "default/victim")
}

// Pitfall 2, the failure itself: a reader that changes a cached object in
// place changes it for every reader, and the next event of that object
// replaces it without a word.
func TestAnObjectChangedInPlaceIsSeenByEveryReaderUntilTheNextEventSilentlyReplacesIt(t *testing.T) {
	var reported []error
	var mu sync.Mutex
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	_, _ = lw.Create(configMap("a"))
	runInformer(t, inf)
	waitSynced(t, inf)
	key := informer.Key{Namespace: "default", Name: "a"}

	mine, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	mine.Labels = map[string]string{"approved": "yes"} // the bug: no DeepCopy first
	other, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	assert.Equal(t, "yes", other.Labels["approved"], "every reader sees a state the server never had")

	changed := configMap("a")
	changed.Data = map[string]string{"v": "2"}
	_, err = lw.Update(changed)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		now, _ := inf.Lister().Namespace("default").Get("a")
		return now.Data["v"] == "2"
	}, hangGuard, time.Millisecond)
	now, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Empty(t, now.Labels, "the watch event replaced the change made in place")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, reported, "and nothing said so")
}

func TestWaitForCacheSyncNamesWhatIsNotSyncedWhenTheContextEnds(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Name: "configmaps of the test"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := sharedinformer.WaitForCacheSync(ctx, inf)
	var notSynced *sharedinformer.NotSyncedError
	require.ErrorAs(t, err, &notSynced, "never run, never synced")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	require.Len(t, notSynced.Pending, 1)
	assert.Equal(t, "configmaps of the test", notSynced.Pending[0].Name)
	assert.NoError(t, notSynced.Pending[0].LastFailure, "nothing failed: it never ran")
	assert.Contains(t, err.Error(), "configmaps of the test: not synced after")
}

func TestAnEmptyFirstListSyncsAtOnce(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	runInformer(t, inf)
	waitSynced(t, inf)
}

func TestRunTwiceIsAnErrorAndRunLeavesNoGoroutineBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("a"))
	var calls atomic.Int32
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(*corev1.ConfigMap, bool) { calls.Add(1) },
	}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- inf.Run(ctx) }()
	waitSynced(t, reg) // the handler has handled its initial list (the informer's own sync only buffered it)
	assert.Error(t, inf.Run(ctx))
	cancel()
	require.NoError(t, <-done)
	assert.EqualValues(t, 1, calls.Load())
}

func TestNewRejectsAMissingListerWatcherAndAClashingIndexName(t *testing.T) {
	_, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{})
	assert.ErrorContains(t, err, "ListerWatcher is nil")
	_, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, err = sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"namespace": nil}})
	assert.ErrorContains(t, err, `index "namespace" is built in`)
}

func TestReadyNamesEachInformerNotSyncedYetWithoutWaitingAndIsNilOnceSynced(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Name: "configmaps of the test"})
	err := sharedinformer.Ready(inf)
	var notSynced *sharedinformer.NotSyncedError
	require.ErrorAs(t, err, &notSynced, "never run, never synced")
	assert.ErrorIs(t, err, sharedinformer.ErrNotSynced)
	require.Len(t, notSynced.Pending, 1)
	assert.Equal(t, "configmaps of the test", notSynced.Pending[0].Name)
	assert.EqualError(t, err, "configmaps of the test: not synced yet: no failure seen (still listing, or never started)")

	runInformer(t, inf)
	waitSynced(t, inf)
	assert.NoError(t, sharedinformer.Ready(inf))
}

// failingLW is a ListerWatcher whose every LIST and WATCH fails while
// down is set, as requests to a server that went away do.
type failingLW struct {
	*memlistwatch.ListerWatcher[*corev1.ConfigMap]
	down atomic.Bool
}

func (f *failingLW) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	if f.down.Load() {
		return nil, metav1.ListMeta{}, apierrors.NewServiceUnavailable("the API server is down")
	}
	return f.ListerWatcher.List(ctx, opts)
}

func (f *failingLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if f.down.Load() {
		return nil, apierrors.NewServiceUnavailable("the API server is down")
	}
	return f.ListerWatcher.Watch(ctx, opts)
}

// Once synced, an informer stays ready: while its watch is broken and
// every request fails, Ready is still nil and the lister still serves
// the cache. A probe on Ready takes no replica out for a slow server.
func TestOnceSyncedAnInformerStaysReadyAndServesItsCacheWhileEveryRequestFails(t *testing.T) {
	lw := &failingLW{ListerWatcher: memlistwatch.New[*corev1.ConfigMap]()}
	_, _ = lw.Create(configMap("a"))
	failures := make(chan error, 100)
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, OnError: func(err error) {
		select {
		case failures <- err:
		default:
		}
	}})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	require.NoError(t, sharedinformer.Ready(inf))

	lw.down.Store(true)
	lw.DropWatches()
	for range 2 { // the broken watch, then a failed attempt to watch or list again
		select {
		case err := <-failures:
			t.Log(err)
		case <-time.After(hangGuard):
			t.Fatalf("no failure reported %v after the server went down", hangGuard)
		}
	}
	assert.NoError(t, sharedinformer.Ready(inf), "still ready while every request fails")
	assert.True(t, inf.HasSynced())
	cached, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err, "the cache is still served")
	assert.Equal(t, "a", cached.Name)
}

func TestReadyOfANilSyncerIsAnErrorNotAPanic(t *testing.T) {
	var reg *sharedinformer.Registration // from an AddEventHandler whose error was ignored
	assert.ErrorContains(t, sharedinformer.Ready(reg), "Ready: syncer 0 is nil")
}
