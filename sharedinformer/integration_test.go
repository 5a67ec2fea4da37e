package sharedinformer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	return s
}()

// configMapsIn returns a source for the ConfigMaps of one namespace.
func configMapsIn(ns string) reflector.Source {
	return reflector.Source{Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns}
}

// newRealInformer returns an informer of ns's ConfigMaps on the server cfg
// points at.
func newRealInformer(t *testing.T, cfg *rest.Config, ns string) *cmInformer {
	t.Helper()
	return newRealInformerOn(t, cfg, ns, nil)
}

// newRealInformerOn is newRealInformer with a clock for its resyncs (nil:
// the real one).
func newRealInformerOn(t *testing.T, cfg *rest.Config, ns string, clock informer.Clock) *cmInformer {
	t.Helper()
	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, configMapsIn(ns))
	require.NoError(t, err)
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: lw,
		Resource:      corev1.Resource("configmaps"),
		Reflector:     reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second},
		Clock:         clock,
	})
	require.NoError(t, err)
	return inf
}

func create(ctx context.Context, t *testing.T, client *rest.RESTClient, ns, name string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").
		Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}).Do(ctx).Into(out))
	return out
}

// A handler blocked in its first call for the whole test holds back no
// other: on the real apiserver, each create reaches the fast handler
// while the stuck one is still in its call and its notifications wait in
// its own buffer. Each create waits for the fast handler's call before the
// next is sent, so the test proves delivery, not a speed (a loaded machine
// only makes it slower): how long each took is logged, not compared. The
// same guarantee on simulated time is TestAStuckHandlerDelaysNoOtherHandler.
func TestAHandlerBlockedForTheWholeTestDoesNotHoldBackAnother(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // against hanging, not a timing
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)

	inf := newRealInformer(t, cp.Config(), ns)
	got := make(chan string, 16)
	_, err = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) { got <- cm.Name },
	}, sharedinformer.HandlerOptions{Name: "fast"})
	require.NoError(t, err)
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int32
	stuck, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(*corev1.ConfigMap, bool) { calls.Add(1); <-release }, // blocks until the test ends
	}, sharedinformer.HandlerOptions{Name: "stuck"})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	const n = 15
	took := make([]time.Duration, 0, n)
	for i := range n {
		name := fmt.Sprintf("cm-%d", i)
		start := time.Now()
		create(ctx, t, client, ns, name)
		select {
		case arrived := <-got:
			require.Equal(t, name, arrived)
		case <-ctx.Done():
			require.FailNow(t, "the fast handler never got its add", "%s: %d of %d delivered beside the stuck handler", name, i, n)
		}
		took = append(took, time.Since(start))
	}
	assert.Equal(t, int32(1), calls.Load(), "the stuck handler is still in its first call")
	require.Eventually(t, func() bool { return stuck.Depth() == n-1 }, hangGuard, time.Millisecond,
		"the stuck handler's other notifications wait in its own buffer; depth %d", stuck.Depth())
	slices.Sort(took)
	t.Logf("every create reached the fast handler beside one blocked for the whole test (median create→handler %v, %d waiting for the stuck one)",
		took[n/2], stuck.Depth())
}

// Three resync periods pass on a fake clock, so the test waits for the
// resyncs themselves, not for three seconds; the requests are counted in
// the real apiserver's audit log.
func TestResyncDeliversUpdatesAndMakesZeroAPIRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	create(ctx, t, client, ns, "a")
	create(ctx, t, client, ns, "b")

	cfg := cp.Config()
	cfg.UserAgent = "resync-test-" + ns // this run's own: the audit log outlives a run (-count=2)
	clock := workqueue.NewFakeClock(time.Now())
	inf := newRealInformerOn(t, cfg, ns, clock)
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec, sharedinformer.HandlerOptions{ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	mine := testenv.RequestFilter{UserAgent: cfg.UserAgent}
	// Synced means the LIST is in; the reflector opens its WATCH just
	// after, on its own goroutine. Count from when the audit log has it.
	require.Eventually(t, func() bool {
		n, err := cp.CountRequests(ctx, testenv.RequestFilter{UserAgent: cfg.UserAgent, Verb: "watch"})
		return err == nil && n >= 1
	}, time.Minute, 10*time.Millisecond, "the informer's WATCH never reached the audit log")
	before, err := cp.CountRequests(ctx, mine)
	require.NoError(t, err)

	resyncs := func() int {
		n := 0
		for _, call := range rec.snapshot() {
			if call == "resync a" || call == "resync b" {
				n++
			}
		}
		return n
	}
	for period := 1; period <= 3; period++ {
		stepResync(t, clock, time.Second, func() bool { return resyncs() == 2*period },
			"period %d: want a resync of a and of b; calls: %q", period, rec.snapshot())
	}
	after, err := cp.CountRequests(ctx, mine)
	require.NoError(t, err)
	t.Logf("%d resync notifications, %d API requests during them (%d before: the LIST and the WATCH)", resyncs(), after-before, before)
	assert.Equal(t, before, after, "a resync replays the cache; it makes no request")
}

func TestTransformDropsManagedFieldsAndShrinksTheCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	writer := cp.Config()
	writer.QPS = -1 // no client-side throttle: at its default, 30 creates would take 4 s
	client, err := testenv.CoreV1Client(writer)
	require.NoError(t, err)
	const n = 30
	for i := range n {
		create(ctx, t, client, ns, fmt.Sprintf("cm-%d", i))
	}

	bytesPerObject := func(transform bool) int {
		inf := newRealInformer(t, cp.Config(), ns)
		if transform {
			require.NoError(t, inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
				cm.ManagedFields = nil
				return cm, nil
			}))
		}
		ictx, stop := context.WithCancel(ctx)
		defer stop()
		go func() { _ = inf.Run(ictx) }()
		waitSynced(t, inf)
		total := 0
		for _, cm := range inf.Lister().List(nil) {
			if transform {
				assert.Empty(t, cm.ManagedFields)
			} else {
				assert.NotEmpty(t, cm.ManagedFields, "the server records who wrote each field")
			}
			data, err := json.Marshal(cm)
			require.NoError(t, err)
			total += len(data)
		}
		require.Equal(t, n, inf.Indexer().Len())
		return total / n
	}
	plain, stripped := bytesPerObject(false), bytesPerObject(true)
	t.Logf("encoded bytes per cached ConfigMap: %d as served, %d without managedFields (%.0f%%)", plain, stripped, 100*float64(stripped)/float64(plain))
	assert.Less(t, stripped, plain)
}

func TestDeletesMissedDuringAnOutageReachEveryHandlerWithFinalStateUnknown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Watch cache off: after compaction, the informer's re-watch from its
	// old resourceVersion gets a real 410 and must relist.
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	create(ctx, t, client, ns, "doomed")
	create(ctx, t, client, ns, "survivor")

	proxy, viaProxy := cp.Proxy(t)
	inf := newRealInformer(t, viaProxy, ns)
	first, second := &recorder{}, &recorder{}
	for _, h := range []*recorder{first, second} {
		_, err := inf.AddEventHandler(h, sharedinformer.HandlerOptions{})
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)

	// The outage: the informer can neither keep its watch nor open a new
	// one while the object is deleted and history compacted. (A plain cut
	// would reconnect within milliseconds and see the delete as an event.)
	// It lasts until the compaction is done, however long that takes.
	proxy.Refuse(time.Minute)
	proxy.CutAll()
	require.NoError(t, client.Delete().Namespace(ns).Resource("configmaps").Name("doomed").Do(ctx).Error())
	create(ctx, t, client, ns, "newcomer") // two writes after the delete...
	create(ctx, t, client, ns, "latecomer")
	_, err = cp.Compact(ctx) // ...so the re-watch's start is compacted away
	require.NoError(t, err)
	proxy.Refuse(0) // the outage ends: a refusal of no time from now reopens at once

	for _, h := range []*recorder{first, second} {
		require.Eventually(t, func() bool { return slices.Contains(h.snapshot(), "delete doomed (final state unknown)") },
			hangGuard, 10*time.Millisecond, "calls: %q", h.snapshot())
		assert.NotContains(t, h.snapshot(), "delete doomed", "the watch never delivered this delete")
		assert.Contains(t, h.snapshot(), "add newcomer")
	}
	_, err = inf.Lister().Namespace(ns).Get("doomed")
	assert.Error(t, err, "the cache dropped it too")
}
