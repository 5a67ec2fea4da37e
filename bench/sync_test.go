package bench

// Workload 8: the initial sync, from pre-encoded LIST responses, so that
// only the client side is measured. Whole syncs and relists against a real
// API server, through each library's factory, are chapter 17's (bench/scale
// and bench/cmd/syncpair).

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

func encodedPods(n int, protobuf bool) []byte {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(1000 + n)}}
	for i := range n {
		list.Items = append(list.Items, *pod(i))
	}
	return encode(list, protobuf)
}

func stripManagedFields(p *corev1.Pod) *corev1.Pod {
	p.ManagedFields = nil
	return p
}

// startOursPods starts our informer over src and returns once it synced.
func startOursPods(ctx context.Context, src *fakeSource, strip bool) any {
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.Pod]{
		ListerWatcher: oursLW[*corev1.Pod]{src},
		Reflector:     reflectorPageAll,
		OnError:       quietOnError,
		Logger:        discard,
	})
	if err != nil {
		panic(err)
	}
	if strip {
		_ = inf.SetTransform(func(p *corev1.Pod) (*corev1.Pod, error) { return stripManagedFields(p), nil })
	}
	go func() { _ = inf.Run(ctx) }()
	<-inf.Synced()
	return inf
}

func startClientGoPods(ctx context.Context, src *fakeSource, strip bool) any {
	inf := cache.NewSharedIndexInformer(newClientGoLW(src), &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if strip {
		_ = inf.SetTransform(func(obj any) (any, error) {
			if p, ok := obj.(*corev1.Pod); ok {
				return stripManagedFields(p), nil
			}
			return obj, nil
		})
	}
	go inf.RunWithContext(ctx)
	<-inf.HasSyncedChecker().Done()
	return inf
}

// Workload 8: one op is an informer started over a pre-encoded LIST of n
// realistic Pods and run until its sync signal. impl=baseline only decodes
// the same bytes (the floor: a bare LIST + decode). Reported: allocations
// per object, and the live heap per cached object after a GC.
func BenchmarkInitialSync(b *testing.B) {
	for _, n := range sizes([]int{2000}, 10_000) {
		for _, enc := range []string{"json", "protobuf"} {
			data := encodedPods(n, enc == "protobuf")
			for _, transform := range []string{"none", "strip-managedfields"} {
				prefix := "pods=" + count(n) + "/enc=" + enc + "/transform=" + transform + "/"
				for _, impl := range []struct {
					name  string
					start func(context.Context, *fakeSource, bool) any
				}{{ours, startOursPods}, {clientgo, startClientGoPods}, {"impl=baseline", nil}} {
					if impl.start == nil && transform != "none" {
						continue
					}
					b.Run(prefix+impl.name, func(b *testing.B) {
						var mallocs, heap uint64
						var ms runtime.MemStats
						b.ReportAllocs()
						for range b.N {
							b.StopTimer()
							before := heapAlloc()
							runtime.ReadMemStats(&ms)
							m0 := ms.Mallocs
							ctx, cancel := context.WithCancel(context.Background())
							b.StartTimer()
							var keep any
							if impl.start == nil {
								obj, err := decodeList(data)
								if err != nil {
									b.Fatal(err)
								}
								keep = obj
							} else {
								keep = impl.start(ctx, newFakeSource(func() []byte { return data }), transform != "none")
							}
							b.StopTimer()
							runtime.ReadMemStats(&ms)
							mallocs += ms.Mallocs - m0
							heap += heapAlloc() - before
							runtime.KeepAlive(keep)
							cancel()
							b.StartTimer()
						}
						b.ReportMetric(float64(mallocs)/float64(b.N*n), "allocs/obj")
						b.ReportMetric(float64(heap)/float64(b.N*n), "heapB/obj")
					})
				}
			}
		}
	}
}

// reflectorPageAll asks our reflector for the whole list in one page, as
// the fake source answers anyway.
var reflectorPageAll = reflector.Tuning{PageSize: -1}
