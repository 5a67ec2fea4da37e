package deltafifo_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
)

func configMaps(n int, prefix string) []*corev1.ConfigMap {
	objs := make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = cm(fmt.Sprintf("%s%d", prefix, i), strconv.Itoa(i+1))
	}
	return objs
}

func nop(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error { return nil }

// 100k updates spread over 10k keys, then every key popped: the coalescing
// workload of a busy informer. One op is the whole round.
func BenchmarkAddThenPop100kUpdatesOver10kKeys(b *testing.B) {
	objs := configMaps(10_000, "cm-")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
		for i := range 100_000 {
			_ = f.Update(objs[i%len(objs)])
		}
		for f.Len() > 0 {
			_ = f.Pop(ctx, nop)
		}
	}
}

// A relist of 10k objects into a FIFO whose cache knows 11k: 10k Replaced
// deltas and 1k tombstones.
func BenchmarkReplace10kWith1kVanished(b *testing.B) {
	list := configMaps(10_000, "cm-")
	known, err := indexer.New(indexer.Options[*corev1.ConfigMap]{})
	if err != nil {
		b.Fatal(err)
	}
	for _, obj := range append(configMaps(10_000, "cm-"), configMaps(1_000, "gone-")...) {
		_ = known.Add(obj)
	}
	b.ReportAllocs()
	for b.Loop() {
		f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: known})
		_ = f.Replace(list, "10000")
		if f.Len() != 11_000 {
			b.Fatalf("queued %d keys, want 11000", f.Len())
		}
	}
}

// The price of tracing: the same Add+Pop with no hook and with a hook
// that does nothing.
func BenchmarkAddPopTrace(b *testing.B) {
	obj := cm("a", "1")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		hook informer.TraceHook
	}{{"none", nil}, {"set", func(informer.TraceEvent) {}}} {
		b.Run(tc.name, func(b *testing.B) {
			f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{Trace: tc.hook})
			b.ReportAllocs()
			for b.Loop() {
				_ = f.Add(obj)
				_ = f.Pop(ctx, nop)
			}
		})
	}
}
