package deltafifo_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
)

func configMap(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name, ResourceVersion: rv}}
}

// printDeltas is a process function that only prints what it is given.
func printDeltas(key informer.Key, deltas deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
	fmt.Printf("%s (initial list: %v):", key, initial)
	for _, d := range deltas {
		fmt.Printf(" %s@%s", d.Type, d.Object.ResourceVersion)
	}
	fmt.Println()
	return nil
}

// Three changes to one key and one to another: two pops, not four. The hot
// key keeps its place in line and hands over its whole history at once.
func ExampleDeltaFIFO_Pop() {
	fifo, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = fifo.Add(configMap("web", "10"))
	_ = fifo.Add(configMap("db", "11"))
	_ = fifo.Update(configMap("web", "12"))
	_ = fifo.Update(configMap("web", "13"))

	for fifo.Len() > 0 {
		_ = fifo.Pop(context.Background(), printDeltas)
	}
	// Output:
	// demo/web (initial list: false): Added@10 Updated@12 Updated@13
	// demo/db (initial list: false): Added@11
}

// A relist reveals a deletion the watch missed. The cache still holds
// "old", the new list does not: Replace queues a delete whose final state
// is unknown, carrying the last state the cache had.
func ExampleDeltaFIFO_Replace() {
	cache, err := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = cache.Add(configMap("old", "5"))
	fifo, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache})
	if err != nil {
		fmt.Println(err)
		return
	}

	_ = fifo.Replace([]*corev1.ConfigMap{configMap("new", "9")}, "9")
	for fifo.Len() > 0 {
		_ = fifo.Pop(context.Background(), func(key informer.Key, deltas deltafifo.Deltas[*corev1.ConfigMap], initial bool) error {
			d := deltas.Newest()
			fmt.Printf("%s: %s, final state unknown: %v, last known rv %s\n",
				key, d.Type, d.FinalStateUnknown, d.Object.ResourceVersion)
			if d.Type == deltafifo.Deleted {
				return cache.Delete(d.Object)
			}
			return cache.Update(d.Object)
		})
	}
	fmt.Println("cache now holds", cache.ListKeys())
	fmt.Println("synced:", fifo.HasSynced())
	// Output:
	// demo/new: Replaced, final state unknown: false, last known rv 9
	// demo/old: Deleted, final state unknown: true, last known rv 5
	// cache now holds [demo/new]
	// synced: true
}

// A relist handed over in parts: each part is popped into the cache
// while the next is still being read, so the old version of "a" is gone
// before "b" arrives. Only FinishReplace, once the whole list is in, may
// tombstone "gone", which no part listed.
func ExampleDeltaFIFO_ReplacePart() {
	cache, err := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fifo, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache})
	if err != nil {
		fmt.Println(err)
		return
	}
	apply := func(key informer.Key, deltas deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
		d := deltas.Newest()
		fmt.Printf("  %s: %s@%s\n", key, d.Type, d.Object.ResourceVersion)
		if d.Type == deltafifo.Deleted {
			return cache.Delete(d.Object)
		}
		return cache.Update(d.Object)
	}
	popAll := func() {
		for fifo.Len() > 0 {
			_ = fifo.Pop(context.Background(), apply)
		}
	}
	_ = fifo.Replace([]*corev1.ConfigMap{configMap("a", "1"), configMap("b", "1"), configMap("gone", "1")}, "1")
	popAll()

	_ = fifo.BeginReplace()
	for _, part := range [][]*corev1.ConfigMap{{configMap("a", "7")}, {configMap("b", "8")}} {
		_ = fifo.ReplacePart(part)
		fmt.Println("part read; applied so far:", fifo.AppliedResourceVersion())
		popAll()
	}
	_ = fifo.FinishReplace("8")
	fmt.Println("list complete")
	popAll()
	fmt.Println("cache now holds", cache.ListKeys(), "at", fifo.AppliedResourceVersion())
	// Output:
	//   demo/a: Replaced@1
	//   demo/b: Replaced@1
	//   demo/gone: Replaced@1
	// part read; applied so far: 1
	//   demo/a: Replaced@7
	// part read; applied so far: 1
	//   demo/b: Replaced@8
	// list complete
	//   demo/gone: Deleted@1
	// cache now holds [demo/a demo/b] at 8
}

// Resync replays the cache. It queues a Sync for every cached key that has
// nothing queued, and it makes no API call: it has no client to make one.
func ExampleDeltaFIFO_Resync() {
	cache, err := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = cache.Add(configMap("settled", "3"))
	_ = cache.Add(configMap("changing", "4"))
	fifo, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = fifo.Update(configMap("changing", "6"))

	_ = fifo.Resync()
	for fifo.Len() > 0 {
		_ = fifo.Pop(context.Background(), printDeltas)
	}
	// Output:
	// demo/changing (initial list: false): Updated@6
	// demo/settled (initial list: false): Sync@3
}
