package sharedinformer_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// The tests here prove promises of the package doc's Guarantees that no
// other test pinned down. They run in a synctest bubble: synctest.Wait
// returns once every goroutine of the informer is blocked, so "has not
// happened" is a fact, not a guess after a sleep.

// A handler stuck in its call holds back nobody but itself: the other
// handler has every change while the stuck one's wait in its own buffer.
func TestAStuckHandlerDelaysNoOtherHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
		release := make(chan struct{})
		stuck, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(*corev1.ConfigMap, bool) { <-release },
		}, sharedinformer.HandlerOptions{Name: "stuck"})
		require.NoError(t, err)
		other := &recorder{}
		_, err = inf.AddEventHandler(other, sharedinformer.HandlerOptions{Name: "other"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { _ = inf.Run(ctx); close(done) }()
		synctest.Wait()
		require.True(t, inf.HasSynced())

		for _, name := range []string{"a", "b", "c"} {
			_, err := lw.Create(configMap(name))
			require.NoError(t, err)
		}
		synctest.Wait() // the stuck handler is in its call on a
		assert.Equal(t, []string{"add a", "add b", "add c"}, other.snapshot(), "the other handler has every change")
		assert.Equal(t, 2, stuck.Depth(), "b and c wait in the stuck handler's own buffer")

		cancel()
		close(release)
		<-done
	})
}

// When Run's context ends with a handler in a call and more buffered for
// it, Run waits for that call and no more: it has not returned while the
// call is in progress, it returns once the call has, and the buffered
// notifications are dropped, not delivered.
func TestRunReturnsOnlyOnceTheCallInProgressHasAndStartsNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
		for _, name := range []string{"a", "b", "c"} {
			_, err := lw.Create(configMap(name))
			require.NoError(t, err)
		}
		h := newBlockingHandler(1, 0) // the first call blocks until released
		reg, err := inf.AddEventHandler(h, sharedinformer.HandlerOptions{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { _ = inf.Run(ctx); close(done) }()
		synctest.Wait()
		require.Equal(t, 2, reg.Depth(), "one call in progress, two notifications buffered")

		cancel()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Run returned while a handler's call was in progress")
		default:
		}

		close(h.release)
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("Run did not return once the call in progress had")
		}
		assert.EqualValues(t, 1, h.calls.Load(), "no call starts once Run's context has ended")
		assert.ErrorIs(t, reg.Err(), context.Canceled)
	})
}

// A handler and a lister are handed the cache's own object, the very
// pointer the indexer holds, not a copy: so a handler must never modify
// what it is given.
func TestHandlersAndTheListerGetTheCachesOwnObjects(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	handed := make(chan *corev1.ConfigMap, 1)
	_, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, _ bool) { handed <- obj },
	}, sharedinformer.HandlerOptions{})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	_, err = lw.Create(configMap("a"))
	require.NoError(t, err)
	got := <-handed

	cached, ok := inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.True(t, ok)
	listed, err := inf.Lister().Namespace("default").Get("a")
	require.NoError(t, err)
	assert.Same(t, cached, got, "the handler is given the cache's object")
	assert.Same(t, cached, listed, "the lister returns the cache's object")
}
