package sharedinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// WaitFor returns only once the change at that resourceVersion is in the
// cache: not while the pop loop is still applying it.
func TestWaitForReturnsOnceTheCacheHasAppliedTheResourceVersion(t *testing.T) {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"gate": g.index}})
	runInformer(t, inf)
	waitSynced(t, inf)

	blocked, err := lw.Create(configMap("block"))
	require.NoError(t, err)
	waited := make(chan error, 1)
	go func() { waited <- inf.WaitFor(context.Background(), blocked.ResourceVersion) }()
	<-g.entered // being applied, not applied
	select {
	case err := <-waited:
		t.Fatalf("WaitFor returned (%v) while the change was still being applied", err)
	default:
	}
	close(g.release)
	require.NoError(t, <-waited)
	_, err = inf.Lister().Namespace("default").Get("block")
	assert.NoError(t, err, "the cache holds what WaitFor waited for")
}

// A bookmark moves the cache to its resourceVersion with nothing to apply:
// WaitFor for a resourceVersion written elsewhere returns on it.
func TestWaitForIsWokenByABookmark(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	runInformer(t, inf)
	waitSynced(t, inf)
	elsewhere := lw.AdvanceResourceVersion(3) // writes to other collections
	waited := make(chan error, 1)
	go func() { waited <- inf.WaitFor(context.Background(), elsewhere) }()
	require.Eventually(t, func() bool { return lw.Bookmark() == 1 }, hangGuard, 5*time.Millisecond)
	require.NoError(t, <-waited)
	assert.Equal(t, elsewhere, inf.LastSyncResourceVersion())
}

// A resourceVersion that is not an integer cannot be ordered: WaitFor
// says so with an error the caller can test for, rather than waiting.
func TestWaitForSaysWhenResourceVersionsAreNotComparable(t *testing.T) {
	inf, _ := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	runInformer(t, inf)
	waitSynced(t, inf)
	err := inf.WaitFor(context.Background(), "opaque-token")
	require.ErrorIs(t, err, sharedinformer.ErrNotComparable)
	assert.Contains(t, err.Error(), `"opaque-token"`)
}

// WaitFor ends with its context, saying how far the cache got.
func TestWaitForEndsWithItsContext(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	runInformer(t, inf)
	waitSynced(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := inf.WaitFor(ctx, lw.AdvanceResourceVersion(1)) // no event, no bookmark will bring it
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "the cache is at")
}

// On a real API server: Fresh returns once the cache holds a write made
// just before it, by someone else, that the informer could not yet have
// seen when Fresh was called.
func TestFreshReturnsOnceTheCacheHoldsEveryEarlierWrite(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx := t.Context()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	defer factory.Wait()
	defer stop()
	factory.Start(runCtx)
	require.NoError(t, factory.WaitForCacheSync(ctx))

	writer := cp.Config()
	writer.QPS = -1 // no client-side throttle: at its default, 20 creates would take 2 s
	core, err := testenv.CoreV1Client(writer)
	require.NoError(t, err)
	for i := range 20 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "fresh-", Namespace: ns}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error(), "create %d", i)
		require.NoError(t, inf.Fresh(ctx))
		all := inf.Lister().List(nil)
		require.Len(t, all, i+1, "after Fresh the cache holds every ConfigMap created before it")
	}
}
