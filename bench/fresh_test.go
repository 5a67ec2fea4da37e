package bench

// What Informer.Fresh costs (chapter 09): a LIST of at most one object
// at resourceVersion "" (a consistent read), then a wait for the cache to
// apply the resourceVersion it answered. Each op first changes one object
// in the informer's scope, so that the wait ends with that change's event
// and not with a bookmark a minute away; mode=waitfor is the same op with
// WaitFor(the change's resourceVersion) in place of Fresh, so the
// difference is the consistent LIST. server-cpu-ms/op is the API
// server's CPU time per op, from /proc. Sizes: 1k, and 100k with
// BENCH_FULL=1.

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/bench/scale"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

func BenchmarkFresh(b *testing.B) {
	cp := testenv.Shared(b)
	server := cp.PIDs()[1] // kube-apiserver
	for _, n := range sizes([]int{1000}, 100_000) {
		ns := cp.Namespace(b)
		createConfigMaps(b, cp.Config(), ns, n)
		ctx, cancel := context.WithCancel(context.Background())
		factory, err := sharedinformer.NewFactory(unlimited(cp.Config()), sharedinformer.FactoryOptions{Scheme: codecsScheme, Logger: discard})
		if err != nil {
			b.Fatal(err)
		}
		inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory, sharedinformer.InNamespace(ns))
		if err != nil {
			b.Fatal(err)
		}
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx); err != nil {
			b.Fatal(err)
		}
		client := coreClient(b, unlimited(cp.Config()))
		// Every op writes a value no op wrote before, across all the
		// sub-benchmark's runs: a PATCH that changes nothing is no write
		// (no new resourceVersion, no event), and Fresh would then wait
		// for a bookmark, a minute away.
		written := 0
		for _, mode := range []string{"fresh", "waitfor"} {
			b.Run(fmt.Sprintf("objects=%s/mode=%s", count(n), mode), func(b *testing.B) {
				before, err := scale.CPUSeconds(server)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					written++
					changed := &corev1.ConfigMap{}
					patch := fmt.Appendf(nil, `{"data":{"fresh":"%d"}}`, written)
					if err := client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("cm-0").Body(patch).Do(ctx).Into(changed); err != nil {
						b.Fatal(err)
					}
					if mode == "fresh" {
						err = inf.Fresh(ctx)
					} else {
						err = inf.WaitFor(ctx, changed.ResourceVersion)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				after, err := scale.CPUSeconds(server)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric((after-before)*1000/float64(b.N), "server-cpu-ms/op")
			})
		}
		cancel()
		factory.Wait()
	}
}
