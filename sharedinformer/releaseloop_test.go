package sharedinformer_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// A factory with 50 informers; 10 of them are released and asked for
// again, 100 times. Whatever a released informer leaves behind would add
// up over 1,000 releases: goroutines and the live heap must stay flat.
func TestReleasingAndReAskingInformersInALoopLeavesGoroutinesAndHeapFlat(t *testing.T) {
	const informers, churned, rounds = 50, 10, 100
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	for i := range informers {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"n": fmt.Sprint(i)}}}
		require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(t.Context()).Error())
	}
	cfg := cp.Config()
	cfg.QPS, cfg.Burst = 1000, 1000 // 1,000 LISTs; the client's limiter is not what is measured
	f := newFactory(t, cfg)
	ctx, stop := context.WithCancel(context.Background())
	defer func() { stop(); f.Wait() }()

	ask := func(i int) *cmInformer {
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace(ns), sharedinformer.WithLabels(fmt.Sprintf("n=%d", i)))
		require.NoError(t, err)
		return inf
	}
	held := make([]*cmInformer, informers)
	for i := range held {
		held[i] = ask(i)
	}
	var goroutines int
	var heap uint64
	for round := range rounds {
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx))
		for _, inf := range held[:churned] {
			require.Equal(t, 1, inf.Indexer().Len())
		}
		if round == 10 { // warm: connections open, pools filled
			goroutines, heap = settled()
		}
		for i := range churned {
			require.NoError(t, sharedinformer.Release(ctx, f, held[i]))
			held[i] = ask(i)
		}
	}
	f.Start(ctx)
	require.NoError(t, f.WaitForCacheSync(ctx))
	goroutinesAfter, heapAfter := settled()
	t.Logf("after round 10: %d goroutines, %.1f MiB live heap; after round %d: %d goroutines, %.1f MiB",
		goroutines, float64(heap)/(1<<20), rounds, goroutinesAfter, float64(heapAfter)/(1<<20))
	assert.LessOrEqual(t, goroutinesAfter, goroutines+5, "a released informer's goroutines end with it")
	assert.Less(t, int64(heapAfter)-int64(heap), int64(2<<20), "900 releases later the live heap is flat (a leaked informer is tens of KiB)")
}

// settled returns the goroutine count once it has stopped falling (the
// watch streams of released informers end just after them) and the live
// heap after a collection.
func settled() (goroutines int, heap uint64) {
	goroutines = runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n >= goroutines {
			break
		}
		goroutines = n
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return goroutines, m.HeapAlloc
}
