package sharding_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// refusingEnvPatches is a server that answers 500 to a PATCH of web-env
// while refuse says so, counting them.
func refusingEnvPatches(refuse func(n int32) bool) (*fakeapiserver.InMemory, *atomic.Int32) {
	var patches atomic.Int32
	return fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/web-env") && refuse(patches.Add(1)) {
			return fakeapiserver.Fault{Status: http.StatusInternalServerError}
		}
		return fakeapiserver.Fault{}
	})), &patches
}

// createWebAndDrainingEnv creates ConfigMap web, the shard's, and
// ConfigMap web-env, the shard's and draining, whose controller is a
// Deployment "web" that is not sharded: web-env's ring key is
// default/web, the ConfigMap's key too.
func createWebAndDrainingEnv(t *testing.T, ctx context.Context, net *fakeapiserver.InMemory, shard sharding.Shard) {
	t.Helper()
	admin := must(testenv.CoreV1Client(net.Config()))
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web",
		Labels: map[string]string{shard.Label(): shard.Member}}}
	isController := true
	env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env",
		Labels:          map[string]string{shard.Label(): shard.Member, shard.DrainLabel(): "true"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "deployment-web", Controller: &isController}}}}
	for _, cm := range []*corev1.ConfigMap{web, env} {
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
	}
}

// An acknowledgement that fails for another object under the same key
// (a webhook that refuses web-env's PATCH, say) does not keep the
// object at the key from its reconcile: the reconcile runs, and the
// failure is still returned, so the key is retried.
func TestAFailedAcknowledgementOfAnotherObjectDoesNotStarveTheKeysOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		net, _ := refusingEnvPatches(func(int32) bool { return true })
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		factory, cms := memberInformer(t, ctx, net, shard)
		defer factory.Wait()
		defer cancel()
		reconciled := 0
		reconcile := sharding.Reconciler(shard, cms.Lister(), must(factory.RESTClient(corev1.SchemeGroupVersion)), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) {
				reconciled++
				return workqueue.Result{}, nil
			})
		_, err := reconcile(ctx, informer.Key{Namespace: "default", Name: "web"})
		require.ErrorContains(t, err, "acknowledging the drain of default/web-env", "the failure is returned, so the key is retried")
		require.Equal(t, 1, reconciled, "ConfigMap web, at the key, is reconciled all the same")
	})
}

// A key whose own reconcile says Terminal (no retry can help web) is
// still retried while another object's acknowledgement under it fails:
// otherwise the queue gives the key up and web-env stays draining on
// this member, with nothing left to bring its key back.
func TestATerminalReconcileStillRetriesAnotherObjectsFailedAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		net, patches := refusingEnvPatches(func(n int32) bool { return n == 1 }) // one transient failure
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		factory, cms := memberInformer(t, ctx, net, shard)
		defer factory.Wait()
		defer cancel()
		// The member keys by ring key (EnqueueMapped with RingKey), one of
		// the two ways Reconciler's doc allows.
		queue := workqueue.New(workqueue.Options[informer.Key]{})
		defer queue.ShutDown()
		must(cms.AddEventHandler(si.EnqueueMapped[*corev1.ConfigMap](queue, func(cm *corev1.ConfigMap) []informer.Key {
			ns, name, _ := strings.Cut(sharding.RingKey(cm), "/")
			return []informer.Key{{Namespace: ns, Name: name}}
		})))
		reconcile := sharding.Reconciler(shard, cms.Lister(), must(factory.RESTClient(corev1.SchemeGroupVersion)), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) {
				return workqueue.Result{}, workqueue.Terminal(errors.New("web's spec is invalid"))
			})
		go workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.GreaterOrEqual(t, patches.Load(), int32(2), "web-env's acknowledgement was refused once and tried again")
		var got corev1.ConfigMap
		admin := must(testenv.CoreV1Client(net.Config()))
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("web-env").Do(ctx).Into(&got))
		require.Empty(t, got.Labels[shard.DrainLabel()],
			"web-env is still draining a minute after one failed acknowledgement: web's Terminal gave the key up (%d PATCHes of web-env)", patches.Load())
	})
}
