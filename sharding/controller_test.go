package sharding_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// runController runs, until ctx ends, a member's controller of resource
// (whose objects are T): an informer of the shard's objects in ns, whose
// events handler puts on a queue, and workers workers that give each key
// to sharding.Reconciler around reconcile. Every member controller of
// these tests is one of these; they differ in resource, keying and
// reconcile.
func runController[T informer.Object](ctx context.Context, t *testing.T, cfg *rest.Config, ns string, shard sharding.Shard,
	resource string, handler func(si.Enqueuer) si.Handler[T], workers int, reconcile workqueue.ReconcileFunc[informer.Key]) {
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory := must(si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme}))
	objs := must(si.InformerFor[T](ctx, factory, si.InNamespace(ns), si.WithLabels(shard.Selector())))
	client := must(factory.RESTClient(corev1.SchemeGroupVersion))
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	defer queue.ShutDown()
	must(objs.AddEventHandler(handler(queue)))
	factory.Start(ctx)
	defer factory.Wait()
	if factory.WaitForCacheSync(ctx) != nil {
		return
	}
	workqueue.Run(ctx, queue, sharding.Reconciler(shard, objs.Lister(), client, resource, reconcile),
		workqueue.RunOptions[informer.Key]{Workers: workers})
}

// byRingKey enqueues every ConfigMap under its ring key (EnqueueMapped
// with RingKey: its controller owner's key, if it has one), as a
// controller that reconciles owners with their children does.
func byRingKey(q si.Enqueuer) si.Handler[*corev1.ConfigMap] {
	return si.EnqueueMapped(q, func(cm *corev1.ConfigMap) []informer.Key {
		return []informer.Key{must(informer.ParseKey(sharding.RingKey(cm)))}
	})
}

// doNothing is a reconcile with nothing to do: the member only takes
// and lets go of keys, through sharding.Reconciler.
func doNothing(context.Context, informer.Key) (workqueue.Result, error) {
	return workqueue.Result{}, nil
}

// runKeyReconciler runs, until ctx ends, a member's controller of
// ConfigMaps that enqueues the objects of its shard that only selects
// under their own key (EnqueueKey) and gives each key to
// sharding.Reconciler around reconcile.
func runKeyReconciler(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, shard sharding.Shard, only labels.Selector, reconcile workqueue.ReconcileFunc[informer.Key]) {
	runController(ctx, t, cfg, ns, shard, "configmaps", func(q si.Enqueuer) si.Handler[*corev1.ConfigMap] {
		return si.Filtered(si.EnqueueKey[*corev1.ConfigMap](q), si.MatchingLabels[*corev1.ConfigMap](only))
	}, 2, reconcile)
}

// runRingKeyReconciler runs, until ctx ends, a member's controller of
// ConfigMaps that enqueues every object of its shard under its ring key
// (byRingKey) and gives each key to sharding.Reconciler.
func runRingKeyReconciler(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, shard sharding.Shard) {
	runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, doNothing)
}

// runRingKeyReconcilerWith is runRingKeyReconciler with reconcile.
func runRingKeyReconcilerWith(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, shard sharding.Shard, reconcile workqueue.ReconcileFunc[informer.Key]) {
	runController(ctx, t, cfg, ns, shard, "configmaps", byRingKey, 2, reconcile)
}
