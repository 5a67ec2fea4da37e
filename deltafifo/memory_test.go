package deltafifo_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// Go maps never shrink: without making its maps anew, a DeltaFIFO that
// once queued a whole list would keep the memory of that burst forever
// (it measured about 180 bytes per object, for an informer's lifetime).
func TestADrainedQueueGivesBackTheMemoryOfABurst(t *testing.T) {
	const n = 50_000
	objs := make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = cm("cm-"+strconv.Itoa(i), "1")
	}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	before := liveHeap()
	require.NoError(t, f.Replace(objs, "1"))
	queued := liveHeap()
	for range n {
		require.NoError(t, f.Pop(context.Background(), func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { return nil }))
	}
	drained := liveHeap()
	t.Logf("queued: %.0f B/object, drained: %.0f B/object", (queued-before)/n, (drained-before)/n)
	assert.Greater(t, (queued-before)/n, 100.0, "the burst itself takes memory")
	assert.Less(t, (drained-before)/n, 5.0, "and it is given back once the queue drains")
	runtime.KeepAlive(f)
	runtime.KeepAlive(objs)
}

func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}
