package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/expectations"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// controller is the lab's operator, built the way DESIGN.md draws it:
//
//	Clusters   ──LIST+WATCH──▶ informer ──handler: Add(key)─────────────┐
//	ConfigMaps ──LIST+WATCH──▶ informer ──handler: Add(owner's key)─────┤
//	                                                                    ▼
//	                          workqueue ──Get──▶ N workers ──▶ reconcile(key)
//
// reconcile makes one ConfigMap per component of a Cluster, then writes
// the Cluster's status. Both informers select only this run's objects by
// label, so runs side by side (--compare) never see each other's.
type controller struct {
	ns, runID  string
	components []string
	naive      bool
	clusters   *rest.RESTClient // JSON, lab.listwatch.dev/v1: the operator's writes
	core       *rest.RESTClient // core/v1: ConfigMap writes

	clusterInf *sharedinformer.Informer[*unstructured.Unstructured]
	cmInf      *sharedinformer.Informer[*corev1.ConfigMap]
	regs       []sharedinformer.Syncer
	queue      *workqueue.Queue[informer.Key]
	metrics    *workqueue.Metrics

	// exp counts the ConfigMap creates whose watch events have not reached
	// the cache yet (pitfall 3: the cache lags your own writes).
	exp *expectations.Expectations[informer.Key]
	// statusFrom maps a Cluster's key to the resourceVersion its last
	// status write started from: while the cache still shows that version,
	// our write has not come back through the watch, and writing again
	// would only earn a 409 Conflict. The same idea as exp, for updates.
	statusFrom sync.Map

	tally *tally
}

func newController(cfg *rest.Config, ns, run string, s settings, t *tally) (*controller, error) {
	clusters, err := jsonClient(cfg, clustersGVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	core, err := cli.CoreV1(cfg)
	if err != nil {
		return nil, err
	}
	c := &controller{
		ns: ns, runID: run, components: s.components, naive: s.naive,
		clusters: clusters, core: core, tally: t,
		metrics: workqueue.NewMetrics(),
	}
	exp, err := expectations.New[informer.Key](expectations.Options{})
	if err != nil {
		return nil, err
	}
	c.exp = exp
	c.queue = workqueue.New(workqueue.Options[informer.Key]{Trace: c.metrics.Observe})

	sel := runLabel + "=" + run
	clw, err := reflector.NewUnstructuredListerWatcher(cfg, reflector.Source{Resource: clustersGVR, Namespace: ns, LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	c.clusterInf, err = sharedinformer.New(sharedinformer.Options[*unstructured.Unstructured]{
		ListerWatcher: clw, Resource: clustersGVR.GroupResource(),
	})
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mlw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns, LabelSelector: sel, Protobuf: true,
	})
	if err != nil {
		return nil, err
	}
	c.cmInf, err = sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: mlw, Resource: schema.GroupResource{Resource: "configmaps"},
	})
	if err != nil {
		return nil, err
	}

	// Handlers only enqueue keys (pitfall 5). A Cluster's own events
	// enqueue its key; the sync period is this handler's resync: every
	// cached Cluster comes back as an update, from the cache, with no API
	// call — what the reconcile then does decides what the resync costs.
	enqueue := func(u *unstructured.Unstructured) {
		c.queue.Add(informer.Key{Namespace: u.GetNamespace(), Name: u.GetName()})
	}
	reg, err := c.clusterInf.AddEventHandler(sharedinformer.HandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(u *unstructured.Unstructured, _ bool) { enqueue(u) },
		UpdateFunc: func(_, u *unstructured.Unstructured) { enqueue(u) },
		DeleteFunc: func(u *unstructured.Unstructured, _ bool) { enqueue(u) },
	}, sharedinformer.HandlerOptions{Name: "clusters", ResyncPeriod: s.syncPeriod})
	if err != nil {
		return nil, err
	}
	c.regs = append(c.regs, reg)

	// A ConfigMap's events enqueue the Cluster that owns it, as
	// controller-runtime's Owns() does: someone editing or deleting a
	// child makes the owner converge again.
	owner := func(cm *corev1.ConfigMap) informer.Key {
		return informer.Key{Namespace: cm.Namespace, Name: cm.Labels[ownerKey]}
	}
	reg, err = c.cmInf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) {
			c.exp.CreationObserved(owner(cm))
			c.queue.Add(owner(cm))
		},
		UpdateFunc: func(_, cm *corev1.ConfigMap) { c.queue.Add(owner(cm)) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) { c.queue.Add(owner(cm)) },
	}, sharedinformer.HandlerOptions{Name: "configmaps"})
	if err != nil {
		return nil, err
	}
	c.regs = append(c.regs, reg)
	return c, nil
}

// run runs both informers, waits until their caches hold the first full
// list (pitfall 4: a worker reading an empty cache would create what
// exists), then runs the workers until ctx ends.
func (c *controller) run(ctx context.Context, workers int) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _ = c.clusterInf.Run(ctx) })
	wg.Go(func() { _ = c.cmInf.Run(ctx) })
	if err := sharedinformer.WaitForCacheSync(ctx, c.regs...); err != nil {
		return err
	}
	c.tally.synced()
	workqueue.Run(ctx, c.queue, c.reconcile, workqueue.RunOptions[informer.Key]{
		Workers: workers,
		OnError: func(key informer.Key, err error) { c.tally.failed(err) },
	})
	c.queue.ShutDown()
	return nil
}

// reconcile counts the calls one reconcile makes (the meter adds every
// request sent with this ctx to calls) and whether it left the Cluster
// converged, then hands the outcome to the workqueue.
func (c *controller) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	calls := new(atomic.Int64)
	ctx = withCallCounter(ctx, calls)
	start := time.Now()
	var converged bool
	var wait time.Duration
	var err error
	if c.naive {
		converged, err = c.reconcileNaive(ctx, key)
	} else {
		converged, wait, err = c.reconcileCached(ctx, key)
	}
	c.tally.reconciled(key, int(calls.Load()), converged && err == nil, time.Since(start))
	if err != nil {
		return workqueue.Result{}, fmt.Errorf("reconciling %s: %w", key, err)
	}
	// Creates not yet seen: their events bring key back; this requeue is
	// for an event that never comes (a watch outage, a relist).
	return workqueue.Result{RequeueAfter: wait}, nil
}

// desiredConfigMap is what component comp of Cluster cr should have.
func desiredConfigMap(cr *unstructured.Unstructured, run, comp string) *corev1.ConfigMap {
	replicas, found, _ := unstructured.NestedInt64(cr.Object, "spec", comp, "replicas")
	if !found {
		replicas = 1
	}
	yes := true
	cm := &corev1.ConfigMap{}
	cm.Name = cr.GetName() + "-" + comp
	cm.Namespace = cr.GetNamespace()
	cm.Labels = map[string]string{runLabel: run, ownerKey: cr.GetName(), group + "/component": comp}
	cm.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: group + "/" + version, Kind: kind, Name: cr.GetName(), UID: cr.GetUID(), Controller: &yes,
	}}
	cm.Data = map[string]string{
		"cluster": cr.GetName(), "component": comp, "replicas": fmt.Sprint(replicas),
	}
	return cm
}

// setReady writes the status this operator reports into a copy of cr:
// which generation it saw, and that every component has its ConfigMap.
func setReady(cr *unstructured.Unstructured, components int) {
	_ = unstructured.SetNestedField(cr.Object, cr.GetGeneration(), "status", "observedGeneration")
	_ = unstructured.SetNestedField(cr.Object, "Ready", "status", "phase")
	_ = unstructured.SetNestedField(cr.Object, int64(components), "status", "components")
}

// isReady reports whether cr's status already says what setReady would.
func isReady(cr *unstructured.Unstructured, components int) bool {
	gen, _, _ := unstructured.NestedInt64(cr.Object, "status", "observedGeneration")
	phase, _, _ := unstructured.NestedString(cr.Object, "status", "phase")
	n, _, _ := unstructured.NestedInt64(cr.Object, "status", "components")
	return gen == cr.GetGeneration() && phase == "Ready" && n == int64(components)
}
