package sharedinformer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkFieldSetsHeldHeapPerObject decodes 10,000 ConfigMaps shaped
// as kube-apiserver answers them (about 1 KiB of data, two labels, one
// managedFields entry written by one client), keeps them as a cache
// would, and reports the live heap that holds them, per object
// (held-B/object), with their managedFields shared (fieldSets) and not.
func BenchmarkFieldSetsHeldHeapPerObject(b *testing.B) {
	const n = 10_000
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%07d","namespace":"ns-%d",`+
			`"uid":"00000000-0000-4000-8000-%012d","resourceVersion":"%d","creationTimestamp":"2026-12-05T12:00:00Z",`+
			`"labels":{"app":"app-%d","tier":"backend"},"managedFields":[{"manager":"scale","operation":"Update","apiVersion":"v1",`+
			`"time":"2026-12-05T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}}}}]},`+
			`"data":{"payload":%q}}`, i, i%10, i, 1000+i, i%100, strings.Repeat(fmt.Sprint(i%10), 900)))
	}
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("shared=%v", shared), func(b *testing.B) {
			var held float64
			for b.Loop() {
				var f fieldSets
				kept := make([]*corev1.ConfigMap, 0, n)
				before := liveHeap()
				for _, body := range bodies {
					cm := &corev1.ConfigMap{}
					if err := json.Unmarshal(body, cm); err != nil {
						b.Fatal(err)
					}
					if shared {
						f.share(cm)
					}
					kept = append(kept, cm)
				}
				held = (liveHeap() - before) / n
				runtime.KeepAlive(kept)
				runtime.KeepAlive(&f)
			}
			b.ReportMetric(held, "held-B/object")
		})
	}
}

// liveHeap is the heap in use after two collections.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}
