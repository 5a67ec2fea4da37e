package bench

// Workloads 8 and 9: the initial sync and relists, from pre-encoded LIST
// responses, so that only the client side is measured.

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

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

// Workload 9: a store of n ConfigMaps relisted again and again (each
// watch ends with 410 Gone). One op is one relist, from the 410 until the
// handler has seen every object again. Reported: the peak heap during the
// relists (sampled every 5 ms) against the steady heap after the first sync.
func BenchmarkRelistStorm(b *testing.B) {
	for _, n := range sizes([]int{10_000}, 50_000) {
		// Two versions of the list, alternated, so every relist changes
		// every object (an unchanged relist may be skipped).
		var data [2][]byte
		for v := range data {
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(v + 1)}}
			for i := range n {
				list.Items = append(list.Items, *configMap("ns-"+strconv.Itoa(i%namespaces), i, v+1))
			}
			data[v] = encode(list, true)
		}
		var lists atomic.Int64
		for _, impl := range []string{ours, clientgo} {
			b.Run("objects="+count(n)+"/"+impl, func(b *testing.B) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				src := newFakeSource(func() []byte { return data[lists.Add(1)%2] })
				var seen atomic.Int64
				if impl == ours {
					inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
						ListerWatcher: oursLW[*corev1.ConfigMap]{src},
						Reflector:     reflectorPageAll,
						OnError:       quietOnError,
						Logger:        discard,
					})
					if err != nil {
						b.Fatal(err)
					}
					_, _ = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
						AddFunc:    func(*corev1.ConfigMap, bool) { seen.Add(1) },
						UpdateFunc: func(_, _ *corev1.ConfigMap) { seen.Add(1) },
					}, sharedinformer.HandlerOptions{})
					go func() { _ = inf.Run(ctx) }()
				} else {
					inf := cache.NewSharedIndexInformer(newClientGoLW(src), &corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
					_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
						AddFunc:    func(any) { seen.Add(1) },
						UpdateFunc: func(_, _ any) { seen.Add(1) },
					})
					go inf.RunWithContext(ctx)
				}
				w := <-src.watches
				for seen.Load() < int64(n) {
					time.Sleep(time.Millisecond)
				}
				steady := heapAlloc()
				var peak atomic.Uint64
				stopSampling := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					var ms runtime.MemStats
					t := time.NewTicker(5 * time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stopSampling:
							return
						case <-t.C:
							runtime.ReadMemStats(&ms)
							if ms.HeapAlloc > peak.Load() {
								peak.Store(ms.HeapAlloc)
							}
						}
					}
				}()
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
					for seen.Load() < int64(n)*int64(i+2) {
						time.Sleep(100 * time.Microsecond)
					}
					w = <-src.watches
				}
				b.StopTimer()
				close(stopSampling)
				<-sampled
				b.ReportMetric(float64(steady)/(1<<20), "steady-heap-MiB")
				b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(peak.Load())/float64(steady), "peak/steady")
			})
		}
	}
}

// reflectorPageAll asks our reflector for the whole list in one page, as
// the fake source answers anyway.
var reflectorPageAll = reflector.Tuning{PageSize: -1}
