package scale

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
)

// The workloads of the store rows: one writer updating objects while 0, 1
// or 10 readers each list one namespace (a tenth of the objects) through
// a lister, in a loop. Nothing else runs: this is the cache alone.
const (
	StoreWrites = "store writes"
	StoreReads  = "store reads"
)

// storeOps is the part of a cache the store rows use.
type storeOps struct {
	update func(*corev1.ConfigMap)
	listNS func(ns string) int
}

func oursStore(objs []*corev1.ConfigMap) (storeOps, error) {
	idx, err := indexer.New(indexer.Options[*corev1.ConfigMap]{}) // the namespace index is built in
	if err != nil {
		return storeOps{}, err
	}
	if err := idx.Replace(objs); err != nil {
		return storeOps{}, err
	}
	l, err := lister.New(idx, schema.GroupResource{Resource: ConfigMaps})
	if err != nil {
		return storeOps{}, err
	}
	return storeOps{
		update: func(cm *corev1.ConfigMap) { _ = idx.Update(cm) },
		listNS: func(ns string) int { return len(l.Namespace(ns).List(labels.Everything())) },
	}, nil
}

func clientGoStore(objs []*corev1.ConfigMap) (storeOps, error) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o
	}
	if err := idx.Replace(items, "1"); err != nil {
		return storeOps{}, err
	}
	return storeOps{
		update: func(cm *corev1.ConfigMap) { _ = idx.Update(cm) },
		listNS: func(ns string) int {
			// What a generated lister's Namespace(ns).List does.
			n := 0
			_ = cache.ListAllByNamespace(idx, ns, labels.Everything(), func(any) { n++ })
			return n
		},
	}, nil
}

// storeObjects are n ConfigMaps over ten namespaces, and for each a newer
// version (the next resourceVersion) for the writer to store.
func storeObjects(n int) (objs, newer []*corev1.ConfigMap) {
	objs, newer = make([]*corev1.ConfigMap, n), make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = WithServerFields(ConfigMap(i), i+1)
		newer[i] = WithServerFields(ConfigMap(i), n+i+1)
	}
	return objs, newer
}

// storeRun runs one writer and readers readers against s for d and
// returns the writes and reads per second. Each reader checks that it
// listed a whole namespace, so a cache that lost objects cannot look fast.
func storeRun(s storeOps, newer []*corev1.ConfigMap, readers int, d time.Duration) (writes, reads float64, err error) {
	perNamespace := len(newer) / 10
	var stop atomic.Bool
	var nReads atomic.Int64
	var short atomic.Int64
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			ns := "ns-" + strconv.Itoa(r%10)
			for !stop.Load() {
				if s.listNS(ns) < perNamespace {
					short.Add(1)
				}
				nReads.Add(1)
			}
		})
	}
	t0 := time.Now()
	nWrites := 0
	for time.Since(t0) < d {
		for range 64 {
			s.update(newer[nWrites%len(newer)])
			nWrites++
		}
	}
	elapsed := time.Since(t0).Seconds()
	stop.Store(true)
	wg.Wait()
	if short.Load() > 0 {
		return 0, 0, fmt.Errorf("scale: %d reads listed fewer than the %d objects of their namespace", short.Load(), perNamespace)
	}
	return float64(nWrites) / elapsed, float64(nReads.Load()) / elapsed, nil
}
