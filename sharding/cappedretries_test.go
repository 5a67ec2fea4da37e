package sharding_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// A member whose queue caps retries (RunOptions.MaxRetries, as client-go's
// sample controller does with maxRetries = 5) must still let a drained
// object go once a brief fault is over: "either way of keying lets every
// drained object go while its member lives", and withOthers' promise
// that the key comes back while another object's acknowledgement failed.
// Here the API server refuses web-env's acknowledgement six times (a
// blip of well under a second at the queue's backoff), then accepts
// every PATCH. The ring key's own reconcile succeeds every time.
func TestADrainWhoseAcknowledgementFailedBrieflyIsLetGoUnderACappedRetryQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		net, patches := refusingEnvPatches(func(n int32) bool { return n <= 6 }) // a transient fault
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		factory, cms := memberInformer(t, ctx, net, shard)
		defer factory.Wait()
		defer cancel()
		queue := workqueue.New(workqueue.Options[informer.Key]{})
		defer queue.ShutDown()
		must(cms.AddEventHandler(si.EnqueueMapped[*corev1.ConfigMap](queue, func(cm *corev1.ConfigMap) []informer.Key {
			ns, name, _ := strings.Cut(sharding.RingKey(cm), "/")
			return []informer.Key{{Namespace: ns, Name: name}}
		})))
		reconcile := sharding.Reconciler(shard, cms.Lister(), must(factory.RESTClient(corev1.SchemeGroupVersion)), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		go workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{MaxRetries: 5, OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		var got corev1.ConfigMap
		admin := must(testenv.CoreV1Client(net.Config()))
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("web-env").Do(ctx).Into(&got))
		require.Empty(t, got.Labels[shard.DrainLabel()],
			"web-env is still draining a minute after its acknowledgement was refused 6 times: the queue gave its key up (%d PATCHes of web-env, %d keys given up)",
			patches.Load(), queue.GaveUp())
	})
}
