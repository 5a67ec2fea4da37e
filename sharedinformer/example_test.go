package sharedinformer_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
)

func exampleConfigMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
}

// An informer over an in-memory API server: the first list arrives as
// initial adds, later changes as they happen, and the lister answers from
// the cache.
func ExampleInformer() {
	api := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = api.Create(exampleConfigMap("settings"))

	inf, _ := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: api})
	calls := make(chan string, 10)
	reg, _ := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, initial bool) {
			calls <- fmt.Sprintf("add %s (initial list: %v)", cm.Name, initial)
		},
		DeleteFunc: func(cm *corev1.ConfigMap, unknown bool) {
			calls <- fmt.Sprintf("delete %s (final state unknown: %v)", cm.Name, unknown)
		},
	}, sharedinformer.HandlerOptions{Name: "printer"})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	// Only ctx bounds the package-level WaitForCacheSync, and an informer
	// that cannot list retries forever: give the wait a deadline.
	syncCtx, cancelSync := context.WithTimeout(ctx, 30*time.Second)
	if err := sharedinformer.WaitForCacheSync(syncCtx, reg); err != nil {
		fmt.Println(err)
	}
	cancelSync()
	fmt.Println(<-calls)

	_, _ = api.Create(exampleConfigMap("feature-flags"))
	fmt.Println(<-calls)
	cached, _ := inf.Lister().Namespace("demo").Get("feature-flags")
	fmt.Println("the lister has", cached.Name, "at resourceVersion", cached.ResourceVersion)

	_ = api.Delete(informer.Key{Namespace: "demo", Name: "settings"})
	fmt.Println(<-calls)

	cancel()
	<-done
	// Output:
	// add settings (initial list: true)
	// add feature-flags (initial list: false)
	// the lister has feature-flags at resourceVersion 3
	// delete settings (final state unknown: false)
}

// The watch goes down, and while it is down an object is deleted and the
// server's history compacted. The informer relists, notices the object is
// gone, and tells the handler so, marking that the final state is unknown.
func ExampleHandler_finalStateUnknown() {
	api := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = api.Create(exampleConfigMap("doomed"))
	inf, _ := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: api,
		OnError:       func(error) {}, // the 410 and the relist are expected here
	})
	deleted := make(chan string, 1)
	_, _ = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		DeleteFunc: func(cm *corev1.ConfigMap, unknown bool) {
			deleted <- fmt.Sprintf("delete %s at its last known resourceVersion %s, final state unknown: %v", cm.Name, cm.ResourceVersion, unknown)
		},
	}, sharedinformer.HandlerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	syncCtx, cancelSync := context.WithTimeout(ctx, 30*time.Second)
	if err := sharedinformer.WaitForCacheSync(syncCtx, inf); err != nil {
		fmt.Println(err)
	}
	cancelSync()

	api.Disconnect()
	_ = api.Delete(informer.Key{Namespace: "demo", Name: "doomed"})
	api.Compact()
	api.Reconnect()
	select {
	case d := <-deleted:
		fmt.Println(d)
	case <-time.After(30 * time.Second):
		fmt.Println("no delete")
	}
	cancel()
	<-done
	// Output:
	// delete doomed at its last known resourceVersion 2, final state unknown: true
}
