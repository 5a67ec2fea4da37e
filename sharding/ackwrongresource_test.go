package sharding_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Reconciler's resource is a plain string, valid to it whatever it says;
// the API server answers a PATCH to a resource it does not serve
// ("configmap" for "configmaps", or a client of another group) with 404
// Not Found. acknowledge took every 404 for "the object was deleted
// meanwhile" and reported the drain let go: the call succeeded, the key
// was not retried, and the object, still there and still drained on this
// member, waited for ever, with nothing in any log or error.
//
// Passing: the call fails while the object is on the server and still
// drained, so the key is retried and the failure seen.
func TestAnAcknowledgementAnsweredNotFoundWhileTheObjectExistsIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		shard := sharding.Shard{Ring: ring, Member: "a"}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "web",
			Labels: map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"}}}
		require.NoError(t, c.core.Post().Namespace(c.ns).Resource("configmaps").Body(cm).Do(t.Context()).Into(cm))
		_, cms := cacheOf(t, cm)

		reconcile := sharding.Reconciler(shard, cms, c.core, "configmap", // sic: the resource is "configmaps"
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		_, err := reconcile(t.Context(), informer.KeyFor(cm))

		now := &corev1.ConfigMap{}
		require.NoError(t, c.core.Get().Namespace(c.ns).Resource("configmaps").Name("web").Do(t.Context()).Into(now))
		require.Equal(t, "true", now.Labels[shard.DrainLabel()], "the object is still drained on the server")
		require.Error(t, err, "the drain was not let go, yet the call reported success: nothing retries it")
	})
}
