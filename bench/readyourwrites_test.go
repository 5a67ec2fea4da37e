package bench

// Chapter 09's side-by-side row: one controller, written twice — on
// client-go's informer and workqueue, and on ours with the
// readyourwrites guard — against the real API server, counted in one run.
// It keeps one child per parent, made with generateName, while writers
// patch the parents as fast as they can (each patch enqueues the parent
// again) and 4 workers reconcile. Both caches are made 20 ms slower per
// change (an indexer function that sleeps), as on a loaded machine, so
// that the window between a write and its event is wide enough to be hit.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	cgqueue "k8s.io/client-go/util/workqueue"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

const (
	rywParents  = 10
	rywChurnFor = 500 * time.Millisecond
	rywLag      = 20 * time.Millisecond
)

func TestTheSameControllerOnClientGoMakesDuplicatesOursWithTheGuardDoesNot(t *testing.T) {
	cp := testenv.Shared(t)
	clientGo := rywRun(t, cp, runClientGoChildren)
	ours := rywRun(t, cp, runOurChildren)
	t.Logf("duplicate generateName children of %d parents, %v of churn, 4 workers, caches 20 ms slow: client-go %d, ours with the guard %d",
		rywParents, rywChurnFor, clientGo, ours)
	assert.Zero(t, ours)
}

// childMaker runs a controller over ns until ctx ends that keeps one
// child per parent; it returns how many children its cache holds.
type childMaker func(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) (cached func() int)

// rywRun runs the controller, makes the parents and patches them,
// waits until its cache holds every child the server has and each parent
// has one, and returns the children beyond one per parent.
func rywRun(t *testing.T, cp *testenv.ControlPlane, run childMaker) int {
	ns := cp.Namespace(t)
	cfg := rest.CopyConfig(cp.Config())
	cfg.QPS, cfg.Burst = 500, 500
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cached := run(ctx, t, cfg, ns)
	// The parents are made while the controller runs, and patched at once:
	// each child is created while its parent's patches are on their way.
	for i := range rywParents {
		p := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%02d", i), Namespace: ns, Labels: map[string]string{"role": "parent"}}}
		require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(p).Do(t.Context()).Error())
	}
	for n, end := 0, time.Now().Add(rywChurnFor); time.Now().Before(end); n++ {
		patch := fmt.Appendf(nil, `{"data":{"tick":"%d"}}`, n)
		require.NoError(t, client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").
			Name(fmt.Sprintf("p-%02d", n%rywParents)).Body(patch).Do(t.Context()).Error())
	}
	var children int
	require.Eventually(t, func() bool {
		list := &corev1.ConfigMapList{}
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").Param("labelSelector", "role=child").Do(t.Context()).Into(list))
		parents := map[string]bool{}
		for _, c := range list.Items {
			parents[c.Labels["parent"]] = true
		}
		children = len(list.Items)
		return len(parents) == rywParents && cached() == children
	}, time.Minute, 10*time.Millisecond)
	return children - rywParents
}

// newChild is the child a reconcile of parent creates.
func newChild(parent *corev1.ConfigMap) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: parent.Name + "-", Namespace: parent.Namespace,
		Labels:          map[string]string{"role": "child", "parent": parent.Name},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
}

// parentKey is the parent a ConfigMap's event concerns: itself, or a
// child's parent.
func parentKey(cm *corev1.ConfigMap) string {
	if p := cm.Labels["parent"]; p != "" {
		return cm.Namespace + "/" + p
	}
	return cm.Namespace + "/" + cm.Name
}

var childSelector = labels.SelectorFromSet(labels.Set{"role": "child"})

// runClientGoChildren is the controller on client-go: a shared informer,
// a rate-limiting workqueue, 4 workers; reads from the informer's indexer.
func runClientGoChildren(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) func() int {
	client, err := testenv.CoreV1Client(cfg)
	require.NoError(t, err)
	inf := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(client, "configmaps", ns, fields.Everything()), &corev1.ConfigMap{}, 0,
		cache.Indexers{"slow": func(any) ([]string, error) { time.Sleep(rywLag); return nil, nil }})
	queue := cgqueue.NewTypedRateLimitingQueue(cgqueue.DefaultTypedControllerRateLimiter[string]())
	enqueue := func(obj any) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			queue.Add(parentKey(cm))
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }})
	require.NoError(t, err)
	reconcile := func(key string) error {
		obj, exists, err := inf.GetIndexer().GetByKey(key)
		if err != nil || !exists || obj.(*corev1.ConfigMap).Labels["role"] != "parent" {
			return err
		}
		parent := obj.(*corev1.ConfigMap)
		for _, o := range inf.GetIndexer().List() {
			if c := o.(*corev1.ConfigMap); c.Labels["role"] == "child" && c.Labels["parent"] == parent.Name {
				return nil
			}
		}
		return client.Post().Namespace(ns).Resource("configmaps").Body(newChild(parent)).Do(ctx).Error()
	}
	var wg sync.WaitGroup
	wg.Go(func() { inf.RunWithContext(ctx) })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	for range 4 {
		wg.Go(func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				if err := reconcile(key); err != nil && ctx.Err() == nil {
					queue.AddRateLimited(key)
				} else {
					queue.Forget(key)
				}
				queue.Done(key)
			}
		})
	}
	t.Cleanup(func() { queue.ShutDown(); wg.Wait() })
	return func() int {
		n := 0
		for _, o := range inf.GetIndexer().List() {
			if childSelector.Matches(labels.Set(o.(*corev1.ConfigMap).Labels)) {
				n++
			}
		}
		return n
	}
}

// runOurChildren is the same controller on this library, each write
// recorded by the guard, which is the queue's Gate.
func runOurChildren(ctx context.Context, t *testing.T, cfg *rest.Config, ns string) func() int {
	scheme := codecsScheme
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	inf, err := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(ns),
		si.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{"slow": func(*corev1.ConfigMap) ([]string, error) {
			time.Sleep(rywLag)
			return nil, nil
		}}))
	require.NoError(t, err)
	client, err := factory.RESTClient(corev1.SchemeGroupVersion)
	require.NoError(t, err)
	guard, err := readyourwrites.New(readyourwrites.Options{})
	require.NoError(t, err)
	children := readyourwrites.Track(guard, inf)
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	_, err = inf.AddEventHandler(si.EnqueueMapped(queue, func(cm *corev1.ConfigMap) []informer.Key {
		key, err := informer.ParseKey(parentKey(cm))
		if err != nil {
			return nil
		}
		return []informer.Key{key}
	}))
	require.NoError(t, err)
	reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		parent, err := inf.Lister().Namespace(key.Namespace).Get(key.Name)
		if apierrors.IsNotFound(err) || parent.Labels["role"] != "parent" {
			return workqueue.Result{}, nil
		}
		if len(inf.Lister().Namespace(key.Namespace).List(labels.SelectorFromSet(labels.Set{"role": "child", "parent": key.Name}))) > 0 {
			return workqueue.Result{}, nil
		}
		child := newChild(parent)
		return workqueue.Result{}, children.Write(ctx, key, client.Post().Namespace(ns).Resource("configmaps").Body(child), child)
	}
	factory.Start(ctx)
	require.NoError(t, factory.WaitForCacheSync(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		workqueue.Run(ctx, queue, reconcile, workqueue.RunOptions[informer.Key]{Workers: 4, Gate: guard, OnError: func(informer.Key, error) {}})
	})
	t.Cleanup(func() { queue.ShutDown(); wg.Wait(); factory.Wait() })
	return func() int { return len(inf.Lister().List(childSelector)) }
}
