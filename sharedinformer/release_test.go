package sharedinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// idleConn is the read loop of client-go's cached HTTP/2 connection: it
// belongs to the transport cache, not to any informer (see
// TestFactoryWaitReturnsAtOnceBeforeStartAndAfterStopWithoutASyncWait).
var idleConn = goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop")

func TestAnInformerStopsWithItsLastHolderAndTheNextAskMakesAFreshOne(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	create(t.Context(), t, client, ns, "before")
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	f, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer func() { stop(); f.Wait() }()

	// An informer that stays opens the connection to the apiserver and
	// its watch (which has delivered an event) before the goroutines the
	// released one must take along are counted.
	stays := cp.Namespace(t)
	staying, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(stays))
	require.NoError(t, err)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(t.Context()))
	create(t.Context(), t, client, stays, "watched")
	require.Eventually(t, func() bool { return staying.Indexer().Len() == 1 }, hangGuard, 5*time.Millisecond)
	before := goleak.IgnoreCurrent()

	first, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	second, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	require.Same(t, first, second, "two holders of one informer")
	seen := &recorder{}
	handler, err := first.AddEventHandler(seen)
	require.NoError(t, err)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(t.Context(), handler))
	cached := func() float64 {
		v, _ := mem.Value("listwatch_informer_cached_objects", first.Name(), "", "v1", "configmaps")
		return v
	}
	require.Equal(t, 1.0, cached())

	require.NoError(t, sharedinformer.Release(t.Context(), f, first))
	create(t.Context(), t, client, ns, "while-held")
	seen.eventually(t, "add before (initial)", "add while-held")
	assert.NoError(t, handler.Err(), "one holder left: still running")

	require.NoError(t, sharedinformer.Release(t.Context(), f, second))
	waitClosed(t, handler.Stopped(), time.Second, "the handler stopped when Release returned")
	assert.ErrorIs(t, handler.Err(), sharedinformer.ErrInformerReleased)
	assert.NoError(t, goleak.Find(before, idleConn), "the released informer's goroutines are gone")
	assert.Zero(t, cached(), "a stopped informer's gauges say it holds nothing")
	applied, _ := mem.Value("informer_store_resource_version", first.Name(), "", "v1", "configmaps")
	assert.Zero(t, applied, "a stopped informer's cache has applied no resourceVersion: it holds nothing")
	assert.ErrorContains(t, sharedinformer.Release(t.Context(), f, first), "not held from this factory")
	_, err = first.AddEventHandler(&recorder{})
	assert.ErrorContains(t, err, "has stopped")

	fresh, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns))
	require.NoError(t, err, "a fresh informer takes the released one's metrics name")
	assert.NotSame(t, first, fresh)
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(t.Context()))
	assert.ElementsMatch(t, []string{"before", "while-held"}, names(fresh.Lister().List(labels.Everything())))
}

func TestAnInformerReleasedBeforeStartEndsItsHandlersAndNeverRuns(t *testing.T) {
	cp := testenv.Shared(t)
	f := newFactory(t, cp.Config())
	inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(cp.Namespace(t)))
	require.NoError(t, err)
	handler, err := inf.AddEventHandler(&recorder{})
	require.NoError(t, err)
	require.NoError(t, sharedinformer.Release(t.Context(), f, inf))
	waitClosed(t, handler.Stopped(), time.Second, "the handler ended with the release")
	assert.ErrorIs(t, handler.Err(), sharedinformer.ErrInformerReleased)
	assert.ErrorContains(t, inf.Run(t.Context()), "released by its last holder")
	assert.ErrorContains(t, f.WaitForCacheSync(t.Context()), "no started informer", "Start has nothing left to run")
}

// names is the names of objs, in their order.
func names[T metav1.Object](objs []T) []string {
	out := make([]string, len(objs))
	for i, obj := range objs {
		out[i] = obj.GetName()
	}
	return out
}

// An informer stopped with the ctx given to Start is released at once,
// and the next InformerFor makes a fresh one without waiting.
func TestAnInformerStoppedWithStartsContextIsReleasedAtOnce(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	f := newFactory(t, cp.Config())
	inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	ctx, stop := context.WithCancel(t.Context())
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(t.Context()))
	stop()
	f.Wait()

	bounded, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, sharedinformer.Release(bounded, f, inf))
	fresh, err := sharedinformer.InformerFor[*corev1.ConfigMap](bounded, f, sharedinformer.InNamespace(ns))
	require.NoError(t, err, "nothing is left stopping")
	assert.NotSame(t, inf, fresh)
}
