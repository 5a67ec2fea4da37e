package sharedinformer_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// One line connects an informer to a workqueue: every add, update and
// delete enqueues the object's key, and a worker reconciles from there.
func ExampleEnqueueKey() {
	api := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = api.Create(exampleConfigMap("settings"))
	inf, _ := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: api})
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	defer queue.ShutDown()

	reg, _ := inf.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() { _ = inf.Run(ctx) }()
	if err := sharedinformer.WaitForCacheSync(ctx, reg); err != nil {
		fmt.Println(err)
		return
	}
	key, _ := queue.Get(ctx)
	fmt.Println("reconcile", key)
	queue.Done(key)
	// Output:
	// reconcile demo/settings
}

// A filter in front of a handler: only ConfigMaps labelled app=web, and
// only when they are added or their labels change. Deletes always pass.
func ExampleFiltered() {
	var printed printer
	h := sharedinformer.Filtered[*corev1.ConfigMap](printed,
		sharedinformer.MatchingLabels[*corev1.ConfigMap](labels.SelectorFromSet(labels.Set{"app": "web"})),
		sharedinformer.LabelsChanged[*corev1.ConfigMap]())

	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}}}
	db := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{"app": "db"}}}
	h.OnAdd(web, false)
	h.OnAdd(db, false)
	h.OnUpdate(web, web) // a resync: labels unchanged
	moved := web.DeepCopy()
	moved.Labels["app"] = "api"
	h.OnUpdate(web, moved) // it leaves the selector: heard once
	h.OnDelete(db, false)
	// Output:
	// add web
	// update web (app=api)
	// delete db
}

// printer is a Handler that prints each notification.
type printer struct{}

func (printer) OnAdd(cm *corev1.ConfigMap, _ bool) { fmt.Println("add", cm.Name) }
func (printer) OnUpdate(_, cm *corev1.ConfigMap) {
	fmt.Printf("update %s (%s)\n", cm.Name, labels.Set(cm.Labels))
}
func (printer) OnDelete(cm *corev1.ConfigMap, _ bool) { fmt.Println("delete", cm.Name) }
