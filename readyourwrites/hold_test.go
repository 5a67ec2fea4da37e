package readyourwrites_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// These tests run on an in-memory API server, where the test decides
// when the cache catches up: by starting the informer, or never.

var owner = informer.Key{Namespace: "demo", Name: "web"}

func newCache(t testing.TB) (*si.Informer[*corev1.ConfigMap], *memlistwatch.ListerWatcher[*corev1.ConfigMap]) {
	t.Helper()
	api := memlistwatch.New[*corev1.ConfigMap]()
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	return inf, api
}

func run(t *testing.T, inf *si.Informer[*corev1.ConfigMap]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, UID: types.UID("uid-" + name)}}
}

// A cache that never catches up holds the key for MaxHold, no longer:
// then the reconcile runs, counted as stale in a metric and a trace
// event, and the key's records are dropped. MaxHold is left at its
// default, 5 s, which chapter 08 quotes.
func TestAKeyIsHeldForMaxHoldAtMostThenRunsCountedAsStale(t *testing.T) {
	inf, api := newCache(t) // never run: its cache never catches up
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	memory := metrics.NewMemory()
	var kinds []string
	guard, err := readyourwrites.New(readyourwrites.Options{Clock: clock, Name: "web",
		Metrics: must(metrics.NewRegistry(memory)),
		Trace:   func(e informer.TraceEvent) { kinds = append(kinds, e.Kind) }})
	require.NoError(t, err)
	written := must(api.Create(configMap("settings")))
	require.NoError(t, readyourwrites.Track(guard, inf).Wrote(owner, written))

	held, _, within := guard.Hold(owner)
	assert.True(t, held)
	assert.Equal(t, 5*time.Second, within)
	clock.Step(3 * time.Second)
	held, _, within = guard.Hold(owner)
	assert.True(t, held)
	assert.Equal(t, 2*time.Second, within, "MaxHold counts from the first hold")
	clock.Step(2 * time.Second)
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "MaxHold passed: it runs")

	assert.Equal(t, []string{readyourwrites.KindHeld, readyourwrites.KindStale}, kinds)
	stale, _ := memory.Value("listwatch_guard_stale_reconciles_total", "web")
	assert.Equal(t, 1.0, stale)
	assert.Zero(t, guard.Pending(), "a stale key's records are dropped")
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "and not held again for them")
}

// A hold ends when its writes are seen, even if a sweep dropped them
// before the key was asked again: the key's next hold gets all of MaxHold,
// not what was left of the first.
func TestAHoldEndedByASweepDoesNotShortenTheNextHold(t *testing.T) {
	inf, api := newCache(t)
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	guard := must(readyourwrites.New(readyourwrites.Options{MaxHold: 5 * time.Second, Clock: clock}))
	cms := readyourwrites.Track(guard, inf)
	first := must(api.Create(configMap("first")))
	require.NoError(t, cms.Wrote(owner, first))
	held, _, _ := guard.Hold(owner)
	require.True(t, held)

	run(t, inf)
	require.NoError(t, inf.WaitFor(t.Context(), first.ResourceVersion))
	assert.Zero(t, guard.Pending(), "swept: the cache has the write")
	clock.Step(4 * time.Second)
	held, _, _ = guard.Hold(owner)
	assert.False(t, held)

	second := configMap("second")
	second.ResourceVersion = "999999" // a write the cache will not show soon
	require.NoError(t, cms.Wrote(owner, second))
	held, _, within := guard.Hold(owner)
	assert.True(t, held)
	assert.Equal(t, 5*time.Second, within, "a new hold, from now")
}

// A delete counts as seen once the cache no longer holds that object: not
// while it does, and also when it holds a new object of that name.
func TestADeleteIsSeenWhenTheCacheNoLongerHoldsThatObject(t *testing.T) {
	inf, api := newCache(t)
	run(t, inf)
	old := must(api.Create(configMap("child")))
	require.NoError(t, inf.WaitFor(t.Context(), old.ResourceVersion))
	guard := must(readyourwrites.New(readyourwrites.Options{}))
	children := readyourwrites.Track(guard, inf)

	key := informer.KeyFor(old)
	children.Deleted(owner, key, old.UID, nil) // the DELETE is sent; its event is not in yet
	held, _, _ := guard.Hold(owner)
	assert.True(t, held, "the cache still holds the deleted object")

	require.NoError(t, api.Delete(key))
	recreated := configMap("child")
	recreated.UID = "uid-new"
	recreated = must(api.Create(recreated))
	require.NoError(t, inf.WaitFor(t.Context(), recreated.ResourceVersion))
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "the cache holds another object of that name now: the deleted one is gone")
}

// A DELETE that only marks its object (a finalizer holds it) is seen once
// the cache holds the object marked, at the DELETE's resourceVersion or
// later, though the object is still there; not while the cache holds it
// unmarked. The same with OpaqueResourceVersions, where the cache must
// hold exactly that version (or a change after it).
func TestADeleteThatOnlyMarksItsObjectIsSeenOnceTheCacheHoldsItMarked(t *testing.T) {
	for _, opaque := range []bool{false, true} {
		t.Run(fmt.Sprintf("OpaqueResourceVersions=%v", opaque), func(t *testing.T) {
			inf, api := newCache(t)
			run(t, inf)
			child := configMap("child")
			child.Finalizers = []string{"example.com/cleanup"}
			child = must(api.Create(child))
			require.NoError(t, inf.WaitFor(t.Context(), child.ResourceVersion))
			guard := must(readyourwrites.New(readyourwrites.Options{OpaqueResourceVersions: opaque}))
			children := readyourwrites.Track(guard, inf)

			// The DELETE's answer: the object marked, at the next
			// resourceVersion. The in-memory API server has no DELETE
			// that only marks, so the mark is stored below as an update.
			marked := child.DeepCopy()
			marked.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			marked.ResourceVersion = strconv.Itoa(must(strconv.Atoi(child.ResourceVersion)) + 1)
			children.Deleted(owner, informer.KeyFor(child), child.UID, marked)
			held, wake, _ := guard.Hold(owner)
			require.True(t, held, "the cache holds the object unmarked")

			stored := must(api.Update(marked))
			require.Equal(t, marked.ResourceVersion, stored.ResourceVersion)
			waitOn(t, wake)
			require.NoError(t, inf.WaitFor(t.Context(), stored.ResourceVersion))
			cached, ok := inf.Indexer().Get(informer.KeyFor(child))
			require.True(t, ok, "the object is still in the cache")
			require.NotNil(t, cached.DeletionTimestamp, "marked")
			held, _, _ = guard.Hold(owner)
			assert.False(t, held, "the cache holds it marked at the DELETE's resourceVersion")
		})
	}
}

// Records are dropped once their cache has caught up even when their key
// is never reconciled again: the guard's memory follows the writes in
// flight, not every write it ever recorded.
func TestRecordsAreDroppedOnceTheCacheCaughtUpWithoutTheirKeyComingBack(t *testing.T) {
	fast, fastAPI := newCache(t)
	slow, slowAPI := newCache(t) // never run
	memory := metrics.NewMemory()
	guard := must(readyourwrites.New(readyourwrites.Options{Name: "web", Metrics: must(metrics.NewRegistry(memory))}))
	fastCache, slowCache := readyourwrites.Track(guard, fast), readyourwrites.Track(guard, slow)
	pending := func() float64 {
		v, _ := memory.Value("listwatch_guard_pending_writes", "web")
		return v
	}

	var last *corev1.ConfigMap
	for i := range 100 {
		last = must(fastAPI.Create(configMap(fmt.Sprintf("a-%03d", i))))
		require.NoError(t, fastCache.Wrote(informer.Key{Namespace: "demo", Name: fmt.Sprintf("owner-%03d", i)}, last))
	}
	assert.Equal(t, 100.0, pending())
	run(t, fast)
	require.NoError(t, fast.WaitFor(t.Context(), last.ResourceVersion))

	for i := range 30 { // writes the other cache never shows, recorded under new keys
		require.NoError(t, slowCache.Wrote(informer.Key{Namespace: "demo", Name: fmt.Sprintf("other-%03d", i)}, must(slowAPI.Create(configMap(fmt.Sprintf("b-%03d", i))))))
	}
	assert.Equal(t, 30.0, pending(), "the 100 seen records went with a sweep, no key reconciled")
	assert.Equal(t, 30, guard.Pending())
}

// One guard per name in a Registry; Close gives the name back, for the
// guard of a new leader's term.
func TestAGuardsMetricNameIsGivenBackOnClose(t *testing.T) {
	reg := must(metrics.NewRegistry(metrics.NewMemory()))
	first := must(readyourwrites.New(readyourwrites.Options{Name: "web", Metrics: reg}))
	_, err := readyourwrites.New(readyourwrites.Options{Name: "web", Metrics: reg})
	require.Error(t, err, "two guards named web")
	first.Close()
	_, err = readyourwrites.New(readyourwrites.Options{Name: "web", Metrics: reg})
	require.NoError(t, err)
}

func TestANegativeMaxHoldIsAnError(t *testing.T) {
	_, err := readyourwrites.New(readyourwrites.Options{MaxHold: -time.Second})
	require.ErrorContains(t, err, "MaxHold")
}

// countingGate is a Gate that counts how often each key is asked about.
type countingGate struct {
	gate  workqueue.Gate[informer.Key]
	mu    sync.Mutex
	asked map[informer.Key]int
}

func (g *countingGate) Hold(key informer.Key) (bool, <-chan struct{}, time.Duration) {
	g.mu.Lock()
	g.asked[key]++
	g.mu.Unlock()
	return g.gate.Hold(key)
}

func (g *countingGate) times(key informer.Key) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.asked[key]
}

// One worker, and a key held for a write its cache has not shown: the
// worker lets the held key go and reconciles the next one. The held key
// is asked about again each time its informer applies a change, and at
// no other time, however long the wait (no polling); it is reconciled
// once its informer has applied the write.
func TestOnlyTheHeldKeyWaitsAndItIsAskedAgainOnlyWhenItsInformerAppliesMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, api := newCache(t)
		run(t, inf)
		require.NoError(t, si.WaitForCacheSync(t.Context(), inf))
		guard := must(readyourwrites.New(readyourwrites.Options{MaxHold: time.Hour}))
		// The write the test records is the child's create, which the
		// API server will make after one other change.
		next := must(strconv.Atoi(api.ResourceVersion()))
		written := configMap("child")
		written.ResourceVersion = strconv.Itoa(next + 2)
		require.NoError(t, readyourwrites.Track(guard, inf).Wrote(owner, written))

		queue := workqueue.New(workqueue.Options[informer.Key]{})
		gate := &countingGate{gate: guard, asked: map[informer.Key]int{}}
		var mu sync.Mutex
		var reconciled []informer.Key
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			workqueue.Run(ctx, queue, func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				reconciled = append(reconciled, key)
				return workqueue.Result{}, nil
			}, workqueue.RunOptions[informer.Key]{Workers: 1, Gate: gate})
		}()
		defer func() { cancel(); <-done }()
		got := func() []informer.Key {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(reconciled)
		}

		other := informer.Key{Namespace: "demo", Name: "other"}
		queue.Add(owner)
		queue.Add(other)
		synctest.Wait()
		assert.Equal(t, []informer.Key{other}, got(), "the held key waits, the next one goes on")
		time.Sleep(30 * time.Minute) // simulated: nothing applied meanwhile
		synctest.Wait()
		assert.Equal(t, 1, gate.times(owner), "not asked again while its informer applied nothing")

		must(api.Create(configMap("unrelated")))
		synctest.Wait()
		assert.Equal(t, 2, gate.times(owner), "asked again once its informer applied a change")
		assert.Equal(t, []informer.Key{other}, got(), "still held: the change was not the write")

		must(api.Create(configMap("child")))
		synctest.Wait()
		assert.Equal(t, 3, gate.times(owner))
		assert.Equal(t, []informer.Key{other, owner}, got(), "reconciled once its informer applied the write")
	})
}
