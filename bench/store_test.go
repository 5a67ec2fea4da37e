package bench

// Workloads 4 and 5: the cache (our indexer, client-go's cache.Indexer) and
// the lister over it.

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
)

const namespaces = 10

func storeObjects(n int) []*corev1.ConfigMap {
	objs := make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = configMap("ns-"+strconv.Itoa(i%namespaces), i, i+1)
	}
	return objs
}

// store is the part of a cache workloads 4 and 5 use.
type store struct {
	update      func(*corev1.ConfigMap)
	listNS      func(ns string) int
	listScan    func(labels.Selector) int
	listByIndex func(value string) int
}

func oursStore(objs []*corev1.ConfigMap) store {
	idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{
		"app": indexer.LabelIndexFunc[*corev1.ConfigMap]("app"), // the namespace index is built in
	}}))
	if err := idx.Replace(objs); err != nil {
		panic(err)
	}
	l := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
	return store{
		update: func(cm *corev1.ConfigMap) { _ = idx.Update(cm) },
		listNS: func(ns string) int { return len(l.Namespace(ns).List(labels.Everything())) },
		listScan: func(sel labels.Selector) int {
			return len(l.List(sel))
		},
		listByIndex: func(value string) int {
			objs, _ := idx.ByIndex("app", value)
			return len(objs)
		},
	}
}

func clientGoStore(objs []*corev1.ConfigMap) store {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		"app": func(obj any) ([]string, error) {
			return []string{obj.(*corev1.ConfigMap).Labels["app"]}, nil
		},
	})
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	if err := idx.Replace(items, "1"); err != nil {
		panic(err)
	}
	return store{
		update: func(cm *corev1.ConfigMap) { _ = idx.Update(cm) },
		listNS: func(ns string) int {
			// What a generated lister's Namespace(ns).List does.
			n := 0
			_ = cache.ListAllByNamespace(idx, ns, labels.Everything(), func(any) { n++ })
			return n
		},
		listScan: func(sel labels.Selector) int {
			n := 0
			_ = cache.ListAll(idx, sel, func(any) { n++ })
			return n
		},
		listByIndex: func(value string) int {
			objs, _ := idx.ByIndex("app", value)
			return len(objs)
		},
	}
}

var stores = []struct {
	impl string
	new  func([]*corev1.ConfigMap) store
}{{ours, oursStore}, {clientgo, clientGoStore}}

// Workload 4: writes to a cache while 0, 1 or 10 readers list one
// namespace (a tenth of the objects) in a loop. One op is one Update.
func BenchmarkStoreUpdateUnderReaders(b *testing.B) {
	for _, n := range sizes([]int{10_000}, 160_000) {
		objs := storeObjects(n)
		for _, readers := range []int{0, 1, 10} {
			for _, impl := range stores {
				b.Run("objects="+count(n)+"/readers="+strconv.Itoa(readers)+"/"+impl.impl, func(b *testing.B) {
					s := impl.new(objs)
					var stop atomic.Bool
					var reads atomic.Int64
					var wg sync.WaitGroup
					for r := range readers {
						wg.Go(func() {
							ns := "ns-" + strconv.Itoa(r%namespaces)
							for !stop.Load() {
								s.listNS(ns)
								reads.Add(1)
							}
						})
					}
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						s.update(objs[i%len(objs)])
						i++
					}
					b.StopTimer()
					stop.Store(true)
					wg.Wait()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
					if readers > 0 {
						b.ReportMetric(float64(reads.Load())/b.Elapsed().Seconds(), "reads/s")
					}
				})
			}
		}
	}
}

// Workload 5: find the 100 objects labelled app=target among n, by a
// label-selector scan (a lister's List) and by an index on the label.
func BenchmarkListerSelector(b *testing.B) {
	for _, n := range sizes([]int{10_000}, 100_000) {
		objs := storeObjects(n)
		for i := range 100 {
			objs[i*(n/100)].Labels = map[string]string{"app": "target"}
		}
		sel := labels.SelectorFromSet(labels.Set{"app": "target"})
		for _, how := range []string{"scan", "index"} {
			for _, impl := range stores {
				b.Run("objects="+count(n)+"/by="+how+"/"+impl.impl, func(b *testing.B) {
					s := impl.new(objs)
					b.ReportAllocs()
					for b.Loop() {
						var got int
						if how == "scan" {
							got = s.listScan(sel)
						} else {
							got = s.listByIndex("target")
						}
						if got != 100 {
							b.Fatalf("found %d objects, want 100", got)
						}
					}
				})
			}
		}
	}
}
