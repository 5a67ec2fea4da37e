package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// Since df1306c the drains under a key are acknowledged after its
// reconcile, guarded by the resourceVersion the cache had before it. A
// member that keys by ring key reconciles web-env under web; if that
// reconcile writes web-env on each pass (an annotation that says what it
// last synced), every acknowledgement is a 409, taken as "its event
// brings the key back", which it does, to a reconcile that writes
// web-env again: web-env stays draining for as long as the reconcile
// writes, each pass a reconcile and two writes with no backoff (409 is
// not a failure). Here the reconcile writes on its first 20 passes only,
// so the test ends; web-env should be let go within a few.
func TestADrainUnderARingKeyIsLetGoThoughTheKeysReconcileWritesThatObjectEachPass(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		factory, cms := memberInformer(t, ctx, net, shard)
		defer factory.Wait()
		defer cancel()
		admin := must(testenv.CoreV1Client(net.Config()))
		queue := workqueue.New(workqueue.Options[informer.Key]{})
		defer queue.ShutDown()
		must(cms.AddEventHandler(byRingKey(queue)))
		var mu sync.Mutex
		passes := 0
		reconcile := sharding.Reconciler(shard, cms.Lister(), must(factory.RESTClient(corev1.SchemeGroupVersion)), "configmaps",
			func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				mu.Lock()
				passes++
				n := passes
				mu.Unlock()
				if key.Name != "web" || n > 20 {
					return workqueue.Result{}, nil
				}
				if _, err := cms.Lister().Namespace("default").Get("web-env"); err != nil {
					return workqueue.Result{}, nil // let go: no longer this member's
				}
				return workqueue.Result{}, admin.Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("web-env").
					Body(fmt.Appendf(nil, `{"metadata":{"annotations":{"example.com/synced":"pass-%d"}}}`, n)).Do(ctx).Error()
			})
		go workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		mu.Lock()
		defer mu.Unlock()
		var env corev1.ConfigMap
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("web-env").Do(ctx).Into(&env))
		require.LessOrEqual(t, passes, 5,
			"web's reconcile ran %d times before web-env was let go (labels now %v): each of its writes of web-env made the acknowledgement a 409", passes, env.Labels)
	})
}
