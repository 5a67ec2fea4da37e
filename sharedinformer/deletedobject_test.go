package sharedinformer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// A delete the watch reports hands every handler the object's final
// state, as the watch gave it: not the cache's own object (the cache held
// an earlier version, which it drops), but one object shared by every
// handler all the same, so none may modify it. The package doc once said
// every object handed to a handler is the cache's own.
func TestADeleteHandsEveryHandlerTheSameFinalStateNotTheCachedObject(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	first, second := make(chan *corev1.ConfigMap, 1), make(chan *corev1.ConfigMap, 1)
	for _, deleted := range []chan *corev1.ConfigMap{first, second} {
		_, err = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
			DeleteFunc: func(obj *corev1.ConfigMap, _ bool) { deleted <- obj },
		})
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)
	cached, ok := inf.Indexer().Get(informer.Key{Namespace: "default", Name: "a"})
	require.True(t, ok)
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))

	got := <-first
	assert.NotSame(t, cached, got, "the final state the watch reported, not the cached version")
	assert.Equal(t, lw.ResourceVersion(), got.ResourceVersion, "at the delete's resourceVersion")
	assert.Same(t, got, <-second, "one object, shared by every handler: never modify it")
}
