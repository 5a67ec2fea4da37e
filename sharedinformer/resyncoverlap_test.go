package sharedinformer_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// nowSignal is a FakeClock whose Now, once armed, closes called: only
// store.Resync calls Now while the informer runs, under the informer's
// mutex, right before it records which handlers are due.
type nowSignal struct {
	*workqueue.FakeClock
	armed  atomic.Bool
	once   sync.Once
	called chan struct{}
}

func (c *nowSignal) Now() time.Time {
	if c.armed.Load() {
		c.once.Do(func() { close(c.called) })
	}
	return c.FakeClock.Now()
}

// resyncsBy counts one handler's resyncs (OnUpdate with old == new), by
// object name, and notes the add of the object named "fence".
type resyncsBy struct {
	mu    sync.Mutex
	n     map[string]int
	fence bool
}

func (r *resyncsBy) handler() sharedinformer.HandlerFuncs[*corev1.ConfigMap] {
	return sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.fence = r.fence || obj.Name == "fence"
		},
		UpdateFunc: func(old, obj *corev1.ConfigMap) {
			if old == obj {
				r.mu.Lock()
				defer r.mu.Unlock()
				r.n[obj.Name]++
			}
		}}
}

func (r *resyncsBy) sawFence() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fence
}

func (r *resyncsBy) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[name]
}

// TestAResyncStillBeingPoppedWhenTheNextTickComesReachesTheHandlersItWasFor:
// the Sync deltas of one resync go to the handlers that resync found due,
// even when the next resync has begun before they were all popped (a
// cache that takes longer than one resync check period to replay: slow
// index functions, a big cache). Handlers: every (1s, which sets the
// check period), two (2s) and three (3s). At t=2s the resync is for
// every and two; the pop loop is held at the first of its Syncs (the
// trace hook, standing for a slow pop) until the t=3s tick has recorded
// its own due set, every and three. Then two gets each object once for
// t=2s, and three each once for t=3s. (Whether the t=3s resync skips the
// t=2s Sync still queued, which then answers both, or finds it popped
// and queues its own, is the runtime's order; either way two and three
// are each reminded once, and every once or twice.) Before the resyncs
// were numbered, the latest due set replaced the one before: two got no
// resync until t=4s, past its period plus one check period, and three
// two at t=3s.
func TestAResyncStillBeingPoppedWhenTheNextTickComesReachesTheHandlersItWasFor(t *testing.T) {
	clock := &nowSignal{FakeClock: workqueue.NewFakeClock(time.Unix(1_000_000, 0)), called: make(chan struct{})}
	var holdPop atomic.Bool
	held := make(chan struct{})
	release := make(chan struct{})
	var heldOnce sync.Once
	var reflectorResyncs atomic.Int64
	hook := informer.TraceHook(func(e informer.TraceEvent) {
		if e.Stage == informer.StageReflector && e.Kind == reflector.KindResync {
			if reflectorResyncs.Add(1) == 3 {
				clock.armed.Store(true) // the next Now is the t=3s store.Resync's
			}
		}
		if e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindPopped && strings.Contains(e.Detail, "newest Sync") && holdPop.Load() {
			heldOnce.Do(func() {
				holdPop.Store(false)
				close(held)
				<-release
			})
		}
	})
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock, Trace: hook})
	for _, name := range []string{"a", "b"} {
		_, err := lw.Create(configMap(name))
		require.NoError(t, err)
	}
	every, two, three := &resyncsBy{n: map[string]int{}}, &resyncsBy{n: map[string]int{}}, &resyncsBy{n: map[string]int{}}
	for _, h := range []struct {
		r      *resyncsBy
		period time.Duration
	}{{every, time.Second}, {two, 2 * time.Second}, {three, 3 * time.Second}} {
		_, err := inf.AddEventHandler(h.r.handler(), sharedinformer.HandlerOptions{ResyncPeriod: h.period})
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)

	// t=1s: every alone.
	stepResync(t, clock.FakeClock, time.Second, func() bool { return every.count("a") == 1 && every.count("b") == 1 })
	// t=2s: every and two are due; the pop loop is held at the first Sync.
	holdPop.Store(true)
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond)
	clock.Step(time.Second)
	select {
	case <-held:
	case <-time.After(hangGuard):
		t.Fatal("the t=2s resync was never popped")
	}
	// t=3s: every and three are due; the tick records so, then the pop
	// loop goes on with the t=2s replay.
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, hangGuard, time.Millisecond, "the t=3s tick was never armed")
	go clock.Step(time.Second)
	select {
	case <-clock.called:
	case <-time.After(hangGuard):
		t.Fatal("the t=3s resync never ran")
	}
	close(release)
	// Handlers are told in order: once each has the fence's add, it has
	// every reminder queued before it.
	_, err := lw.Create(configMap("fence"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return every.sawFence() && two.sawFence() && three.sawFence() }, hangGuard, time.Millisecond,
		"the fence never reached every handler")
	for _, name := range []string{"a", "b"} {
		assert.Contains(t, []int{2, 3}, every.count(name), "every (1s) is reminded of %s at 1s and, once or twice, at 2s and 3s", name)
	}
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, snapshotOf(two),
		"two (period 2s) was due at t=2s: each object once")
	assert.Equal(t, map[string]int{"a": 1, "b": 1}, snapshotOf(three),
		"three (period 3s) was due at t=3s: each object once")
}

func snapshotOf(r *resyncsBy) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.n {
		out[k] = v
	}
	return out
}
