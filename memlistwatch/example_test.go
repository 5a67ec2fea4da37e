package memlistwatch_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
)

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
}

func keys(items []*corev1.ConfigMap) []string {
	var out []string
	for _, cm := range items {
		out = append(out, cm.Namespace+"/"+cm.Name)
	}
	return out
}

func printEvent(ev watch.Event) {
	obj := ev.Object.(*corev1.ConfigMap)
	fmt.Printf("%-8s %q rv=%s %v\n", ev.Type, obj.Name, obj.ResourceVersion, obj.Annotations)
}

// A LIST comes in pages; every page of one list shows the same state, so
// an object created between two pages is not in the second. A WATCH from
// the list's resourceVersion then reports exactly what happened after it.
func Example() {
	ctx := context.Background()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	for _, name := range []string{"a", "b", "c"} {
		_, _ = lw.Create(configMap(name))
	}

	items, meta, _ := lw.List(ctx, metav1.ListOptions{Limit: 2})
	fmt.Printf("page 1: %v rv=%s continue=%q\n", keys(items), meta.ResourceVersion, meta.Continue)
	_, _ = lw.Create(configMap("d")) // resourceVersion 5, after the list's 4
	items, meta2, _ := lw.List(ctx, metav1.ListOptions{Limit: 2, Continue: meta.Continue})
	fmt.Printf("page 2: %v rv=%s continue=%q\n", keys(items), meta2.ResourceVersion, meta2.Continue)

	w, _ := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: meta.ResourceVersion})
	defer w.Stop()
	_ = lw.Delete(informer.Key{Namespace: "default", Name: "a"})
	for range 2 {
		printEvent(<-w.ResultChan())
	}
	// Output:
	// page 1: [default/a default/b] rv=4 continue="4/default/b"
	// page 2: [default/c] rv=4 continue=""
	// ADDED    "d" rv=5 map[]
	// DELETED  "a" rv=6 map[]
}

// After a compaction, a watch from an older resourceVersion cannot be
// served: it gets one ERROR event, 410 Gone with reason Expired, and ends.
// A client must list again. A watch from the compaction point still works.
func ExampleListerWatcher_Compact() {
	ctx := context.Background()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	a, _ := lw.Create(configMap("a"))
	_, _ = lw.Create(configMap("b"))
	fmt.Println("compacted at", lw.Compact())

	old, _ := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
	ev := <-old.ResultChan()
	err := apierrors.FromObject(ev.Object)
	fmt.Println(ev.Type, apierrors.IsResourceExpired(err), err)
	_, open := <-old.ResultChan()
	fmt.Println("still open:", open)

	w, _ := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: "3"})
	defer w.Stop()
	_, _ = lw.Update(a)
	printEvent(<-w.ResultChan())
	// Output:
	// compacted at 3
	// ERROR true too old resource version: 2 (3)
	// still open: false
	// MODIFIED "a" rv=4 map[]
}

// A streaming list is a WATCH that first sends the current state as ADDED
// events and then a bookmark annotated "initial-events-end": from there on,
// the client has the whole list and the watch continues.
func ExampleListerWatcher_Watch_streamingList() {
	ctx := context.Background()
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, _ = lw.Create(configMap("a"))
	_, _ = lw.Create(configMap("b"))

	sendInitialEvents := true
	w, _ := lw.Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    &sendInitialEvents,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	defer w.Stop()
	_, _ = lw.Create(configMap("c"))
	for range 4 {
		printEvent(<-w.ResultChan())
	}
	// Output:
	// ADDED    "a" rv=2 map[]
	// ADDED    "b" rv=3 map[]
	// BOOKMARK "" rv=3 map[k8s.io/initial-events-end:true]
	// ADDED    "c" rv=4 map[]
}
