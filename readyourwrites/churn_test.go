package readyourwrites_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
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
	"github.com/listwatch/informer/fakeapiserver"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// How a controller that creates a child with generateName keeps from
// creating two, while writers change the parents many times a second
// (each change enqueues the parent again) and four workers reconcile:
// with plain cache reads, with expectations, and with the guard.
//
// Each run is a synctest bubble on the fake API server, on simulated
// time: the caches' lag (cacheLag a change) costs no real time, and every
// request takes 2 to 8 ms drawn from the run's seed, so each guarded run
// meets writes, events and reconciles in another order. Plain cache
// reads must make duplicates, or the churn would prove nothing; the guard
// must make none in guardRuns runs; expectations are counted for chapter
// 09. (bench/ runs the guarded controller against the real control
// plane.)
const (
	churnParents = 10
	churnFor     = 500 * time.Millisecond
	guardRuns    = 10
)

func TestTheGuardMakesNoDuplicateGenerateNameChildrenUnderChurn(t *testing.T) {
	plain := churnRun(t, "plain", 0)
	expected := churnRun(t, "expectations", 0)
	guarded := 0
	for seed := range uint64(guardRuns) {
		guarded += churnRun(t, "guard", seed)
	}
	t.Logf("duplicate children of %d parents, %v of churn, 4 workers: plain cache reads %d, expectations %d, guard %d in %d runs",
		churnParents, churnFor, plain, expected, guarded, guardRuns)
	assert.Positive(t, plain, "without the guard the churn made no duplicate: it no longer provokes the bug")
	assert.Zero(t, guarded, "the guard made duplicates")
}

// churnRun runs one controller of the given mode in a bubble of its own
// while writers change its parents for churnFor, waits until it has
// settled, and returns how many children it made beyond one per parent.
func churnRun(t *testing.T, mode string, seed uint64) (duplicates int) {
	synctest.Test(t, func(t *testing.T) {
		srv, cfg := fakeCluster(t, randomLatency(seed))
		const ns = "default"
		cfg.QPS, cfg.Burst = 500, 500
		core := must(testenv.CoreV1Client(cfg))

		exp := must(expectations.New[informer.Key](expectations.Options{}))
		var handlers []si.Handler[*corev1.ConfigMap]
		if mode == "expectations" {
			handlers = append(handlers, si.HandlerFuncs[*corev1.ConfigMap]{AddFunc: func(cm *corev1.ConfigMap, _ bool) {
				if owner, ok := parentOf(cm); ok {
					exp.CreationObserved(owner)
				}
			}})
		}
		c := startController(t, cfg, ns, mode == "guard", 4, func(c *controller) workqueue.ReconcileFunc[informer.Key] {
			return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				parent, err := c.informer.Lister().Namespace(key.Namespace).Get(key.Name)
				if apierrors.IsNotFound(err) || parent.Labels["role"] != "parent" {
					return workqueue.Result{}, nil
				}
				if wait := exp.ExpiresIn(key); mode == "expectations" && wait > 0 {
					return workqueue.Result{RequeueAfter: wait}, nil
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
					if err := exp.ExpectCreations(key, 1); err != nil {
						return workqueue.Result{}, err
					}
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
		// Settled: every parent has a child in the cache, and the cache
		// holds every child the server has. Then a second more, in which
		// nothing may change, so that no create still on its way is missed.
		cachedChildren := func() int {
			return len(c.informer.Lister().List(labels.SelectorFromSet(labels.Set{"role": "child"})))
		}
		for start := time.Now(); !everyParentHasAChild(c, ns) || cachedChildren() != len(serverChildren(srv)); {
			require.Less(t, time.Since(start), within, "not settled")
			time.Sleep(pollEvery)
		}
		settled := len(serverChildren(srv))
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, settled, len(serverChildren(srv)), "a child was made after the controller settled")
		duplicates = settled - churnParents
	})
	return duplicates
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

// everyParentHasAChild says whether the controller's cache shows a child
// of each parent.
func everyParentHasAChild(c *controller, ns string) bool {
	for i := range churnParents {
		if len(childrenOf(c, informer.Key{Namespace: ns, Name: fmt.Sprintf("p-%02d", i)})) == 0 {
			return false
		}
	}
	return true
}

// serverChildren returns the children the fake API server holds.
func serverChildren(srv *fakeapiserver.Server) []string {
	var names []string
	for _, u := range srv.Objects(corev1.SchemeGroupVersion.WithResource("configmaps")) {
		if u.GetLabels()["role"] == "child" {
			names = append(names, u.GetName())
		}
	}
	return names
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
