package indexer

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

// benchObjects returns two versions of 1,000 ConfigMaps in 10 namespaces:
// the second differs in its app label when changeIndex is set, and only in
// another label otherwise.
func benchObjects(changeIndex bool) (v1, v2 []*corev1.ConfigMap) {
	for n := range 1000 {
		ns, name := fmt.Sprintf("ns-%d", n%10), fmt.Sprintf("cm-%d", n)
		v1 = append(v1, cm(ns, name, "app", "web", "rev", "1"))
		if changeIndex {
			v2 = append(v2, cm(ns, name, "app", "db", "rev", "2"))
		} else {
			v2 = append(v2, cm(ns, name, "app", "web", "rev", "2"))
		}
	}
	return v1, v2
}

func benchUpdate(b *testing.B, opts Options[*corev1.ConfigMap], changeIndex bool) {
	v1, v2 := benchObjects(changeIndex)
	idx := must(New(opts))
	if err := idx.Replace(v1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; b.Loop(); n++ {
		version := v1
		if (n/len(v1))%2 == 0 {
			version = v2
		}
		if err := idx.Update(version[n%len(v1)]); err != nil {
			b.Fatal(err)
		}
	}
}

// Update with namespace and app indices, when the app value moves and when
// no index value changes.
func BenchmarkUpdate(b *testing.B) {
	opts := Options[*corev1.ConfigMap]{Indexers: standardIndexers()}
	b.Run("index-change", func(b *testing.B) { benchUpdate(b, opts, true) })
	b.Run("no-index-change", func(b *testing.B) { benchUpdate(b, opts, false) })
}

// The cost of tracing: an index-changing update with no hook, and with a
// hook that only counts events. With no hook no event is built.
func BenchmarkUpdateTrace(b *testing.B) {
	events := 0
	b.Run("nil", func(b *testing.B) {
		benchUpdate(b, Options[*corev1.ConfigMap]{Indexers: standardIndexers()}, true)
	})
	b.Run("set", func(b *testing.B) {
		hook := func(informer.TraceEvent) { events++ }
		benchUpdate(b, Options[*corev1.ConfigMap]{Indexers: standardIndexers(), Trace: hook}, true)
	})
}

// The cost of the mutation detector on writes: a deep copy per Update.
func BenchmarkUpdateDetectMutations(b *testing.B) {
	for _, detect := range []bool{false, true} {
		b.Run(fmt.Sprint(detect), func(b *testing.B) {
			benchUpdate(b, Options[*corev1.ConfigMap]{Indexers: standardIndexers(), DetectMutations: detect}, true)
		})
	}
}

// ByIndex of one namespace out of 10 (100 of 1,000 objects).
func BenchmarkByIndex(b *testing.B) {
	v1, _ := benchObjects(false)
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	if err := idx.Replace(v1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if objs, _ := idx.ByIndex(NamespaceIndex, "ns-3"); len(objs) != 100 {
			b.Fatalf("got %d objects", len(objs))
		}
	}
}

// Replace of 1,000 objects with two indices: what a relist costs.
func BenchmarkReplace(b *testing.B) {
	v1, _ := benchObjects(false)
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	b.ReportAllocs()
	for b.Loop() {
		if err := idx.Replace(v1); err != nil {
			b.Fatal(err)
		}
	}
}
