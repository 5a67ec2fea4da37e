package readyourwrites_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/expectations"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// How a controller that creates a child with generateName keeps from
// creating two, while writers change the parents many times a second
// (each change enqueues the parent again) and four workers reconcile:
// with plain cache reads, with expectations, and with the guard. The
// guard must make no duplicate in guardRuns runs; the other two are
// counted for chapter 08b.
const (
	churnParents = 10
	churnFor     = 500 * time.Millisecond
	guardRuns    = 20
)

func TestTheGuardMakesNoDuplicateGenerateNameChildrenUnderChurn(t *testing.T) {
	plain := churnRun(t, "plain")
	expected := churnRun(t, "expectations")
	guarded := 0
	for range guardRuns {
		guarded += churnRun(t, "guard")
	}
	t.Logf("duplicate children of %d parents, %v of churn, 4 workers: plain cache reads %d, expectations %d, guard %d in %d runs",
		churnParents, churnFor, plain, expected, guarded, guardRuns)
	assert.Zero(t, guarded, "the guard made duplicates")
}

// churnRun runs one controller of the given mode over a fresh namespace
// while writers change its parents for churnFor, waits until it has
// settled, and returns how many children it made beyond one per parent.
func churnRun(t *testing.T, mode string) int {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	admin := rest.CopyConfig(cp.Config())
	admin.QPS, admin.Burst = 500, 500
	core := must(testenv.CoreV1Client(admin))

	exp := expectations.New[informer.Key](expectations.Options{})
	var handlers []si.Handler[*corev1.ConfigMap]
	if mode == "expectations" {
		handlers = append(handlers, si.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, _ bool) {
			if owner, ok := parentOf(cm); ok {
				exp.CreationObserved(owner)
			}
		}})
	}
	c := startController(t, admin, ns, mode == "guard", 4, func(c *controller) workqueue.ReconcileFunc[informer.Key] {
		return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			parent, err := c.informer.Lister().Namespace(key.Namespace).Get(key.Name)
			if apierrors.IsNotFound(err) || parent.Labels["role"] != "parent" {
				return workqueue.Result{}, nil
			}
			if mode == "expectations" && !exp.Satisfied(key) {
				return workqueue.Result{RequeueAfter: exp.ExpiresIn(key)}, nil
			}
			if len(childrenOf(c, key)) > 0 {
				return workqueue.Result{}, nil
			}
			child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: key.Name + "-", Namespace: key.Namespace,
				Labels:          map[string]string{"role": "child", "parent": key.Name},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
			req := c.client.Post().Namespace(key.Namespace).Resource("configmaps").Body(child)
			switch mode {
			case "guard":
				return workqueue.Result{}, c.cms.Write(ctx, key, req, child)
			case "expectations":
				exp.ExpectCreations(key, 1)
				if err := req.Do(ctx).Error(); err != nil {
					exp.CreationObserved(key) // no event will come
					return workqueue.Result{}, err
				}
				return workqueue.Result{}, nil
			default:
				return workqueue.Result{}, req.Do(ctx).Error()
			}
		}
	}, handlers...)

	churn(t, core, ns)
	var children []corev1.ConfigMap
	require.Eventually(t, func() bool { // settled: every parent has a child in the cache, and the cache holds all the server has
		for i := range churnParents {
			if len(childrenOf(c, informer.Key{Namespace: ns, Name: fmt.Sprintf("p-%02d", i)})) == 0 {
				return false
			}
		}
		list := &corev1.ConfigMapList{}
		require.NoError(t, core.Get().Namespace(ns).Resource("configmaps").Param("labelSelector", "role=child").Do(t.Context()).Into(list))
		children = list.Items
		return len(c.informer.Lister().List(labels.SelectorFromSet(labels.Set{"role": "child"}))) == len(children)
	}, within, pollEvery)
	return len(children) - churnParents
}

// churn creates the parents, then changes every one, one after the
// other, as fast as the client allows, for churnFor. The controller is
// running already, so it creates each child while that parent's changes
// are still on their way to its cache: each of them enqueues the parent
// again, with a cache that may not show the child yet.
func churn(t *testing.T, core *rest.RESTClient, ns string) {
	for i := range churnParents {
		p := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%02d", i), Namespace: ns, Labels: map[string]string{"role": "parent"}}}
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(p).Do(t.Context()).Error())
	}
	for n, end := 0, time.Now().Add(churnFor); time.Now().Before(end); n++ {
		name := fmt.Sprintf("p-%02d", n%churnParents)
		patch := fmt.Appendf(nil, `{"data":{"tick":"%d"}}`, n)
		require.NoError(t, core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(name).Body(patch).Do(t.Context()).Error())
	}
}

func childrenOf(c *controller, parent informer.Key) []*corev1.ConfigMap {
	return c.informer.Lister().Namespace(parent.Namespace).List(labels.SelectorFromSet(labels.Set{"role": "child", "parent": parent.Name}))
}

func parentOf(cm *corev1.ConfigMap) (informer.Key, bool) {
	if p := cm.Labels["parent"]; cm.Labels["role"] == "child" && p != "" {
		return informer.Key{Namespace: cm.Namespace, Name: p}, true
	}
	return informer.Key{}, false
}
