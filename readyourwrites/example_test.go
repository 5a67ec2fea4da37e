package readyourwrites_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
)

// A reconcile of "demo/web" wrote a ConfigMap; the API server answered
// with resourceVersion 2. Until the informer's cache shows it, the guard
// holds "demo/web" back; once the cache has applied it, the key may run.
// (Here the informer has not even started when the write is recorded:
// the cache is as late as it can be.)
func ExampleGuard() {
	api := memlistwatch.New[*corev1.ConfigMap]()
	inf, _ := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	guard, _ := readyourwrites.New(readyourwrites.Options{Name: "web"})
	configMaps := readyourwrites.Track(guard, inf)

	owner := informer.Key{Namespace: "demo", Name: "web"}
	written, _ := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-settings"}})
	if err := configMaps.Wrote(owner, written); err != nil { // what Cache.Write does with the API server's answer
		fmt.Println(err)
	}
	held, wake, _ := guard.Hold(owner)
	fmt.Println("written at", written.ResourceVersion, "- held:", held)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = inf.Run(ctx) }()
	for held {
		<-wake // closed each time the cache applies more: no polling
		held, wake, _ = guard.Hold(owner)
	}
	cached, _ := inf.Lister().Namespace("demo").Get("web-settings")
	fmt.Println("the cache has it at", cached.ResourceVersion, "- held:", held, "- records left:", guard.Pending())
	// Output:
	// written at 2 - held: true
	// the cache has it at 2 - held: false - records left: 0
}
