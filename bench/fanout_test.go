package bench

// Workloads 6 and 7: handing changes on — to many handlers, and through
// the DeltaFIFO to a slow consumer.

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/sharedinformer"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

const fanoutObjects = 1000

// fanoutList is the initial LIST both informers start from.
var fanoutList = func() []byte {
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for i := range fanoutObjects {
		list.Items = append(list.Items, *configMap("ns", i, 1))
	}
	return encode(list, true)
}()

// fanoutHandlers counts what the handlers saw. fast[h] counts handler h's
// updates and signals done when it reaches want; the slow handler sleeps
// 1 ms per update while slow is set.
type fanoutHandlers struct {
	want      int64
	fast      []atomic.Int64
	fastDone  sync.WaitGroup
	slow      atomic.Bool
	slowCount atomic.Int64
}

func (f *fanoutHandlers) onFast(h int) {
	if f.fast[h].Add(1) == f.want {
		f.fastDone.Done()
	}
}

func (f *fanoutHandlers) onSlow() {
	if f.slow.Load() {
		time.Sleep(time.Millisecond)
	}
	f.slowCount.Add(1)
}

// runFanout feeds b.N updates through an informer with handlers fast
// handlers and one slow one, and reports ns per event per fast handler,
// the slow handler's backlog when the fast ones were done, and the heap
// left once that backlog drained.
func runFanout(b *testing.B, handlers int, start func(context.Context, *fanoutSource, *fanoutHandlers)) {
	f := &fanoutHandlers{want: int64(b.N), fast: make([]atomic.Int64, handlers)}
	f.slow.Store(true)
	f.fastDone.Add(handlers)
	src := &fanoutSource{newFakeSource(func() []byte { return fanoutList })}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start(ctx, src, f)
	w := <-src.watches
	base := make([]*corev1.ConfigMap, fanoutObjects)
	for i := range base {
		base[i] = configMap("ns", i, 1)
	}
	before := heapAlloc()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		o := *base[i%fanoutObjects]
		o.ResourceVersion = strconv.Itoa(i + 2)
		w.Modify(&o)
	}
	f.fastDone.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(handlers), "ns/event/handler")
	b.ReportMetric(float64(int64(b.N)-f.slowCount.Load()), "peak-buffered")
	b.ReportMetric(float64(int64(heapAlloc())-int64(before)), "heap-peak-B")
	f.slow.Store(false)
	for f.slowCount.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(int64(heapAlloc())-int64(before)), "heap-after-drain-B")
}

type fanoutSource struct{ *fakeSource }

func startOursFanout(ctx context.Context, src *fanoutSource, f *fanoutHandlers) {
	inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{
		ListerWatcher: oursLW[*corev1.ConfigMap]{src.fakeSource},
		OnError:       quietOnError,
		Logger:        discard,
	})
	if err != nil {
		panic(err)
	}
	for h := range len(f.fast) {
		_, _ = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
			UpdateFunc: func(_, _ *corev1.ConfigMap) { f.onFast(h) },
		}, sharedinformer.HandlerOptions{})
	}
	_, _ = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		UpdateFunc: func(_, _ *corev1.ConfigMap) { f.onSlow() },
	}, sharedinformer.HandlerOptions{Name: "slow"})
	go func() { _ = inf.Run(ctx) }()
	<-inf.Synced()
}

func startClientGoFanout(ctx context.Context, src *fanoutSource, f *fanoutHandlers) {
	inf := cache.NewSharedIndexInformer(newClientGoLW(src.fakeSource), &corev1.ConfigMap{}, 0, cache.Indexers{})
	for h := range len(f.fast) {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, _ any) { f.onFast(h) },
		})
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { f.onSlow() },
	})
	go inf.RunWithContext(ctx)
	<-inf.HasSyncedChecker().Done()
}

// Workload 6: one informer, handlers fast handlers plus one slow one
// (1 ms per event). impl=chan is the floor: the same events handed to each
// fast handler's goroutine over a buffered channel, with no informer.
func BenchmarkFanout(b *testing.B) {
	for _, handlers := range []int{1, 10, 100} {
		name := "handlers=" + strconv.Itoa(handlers) + "+1slow/"
		b.Run(name+ours, func(b *testing.B) { runFanout(b, handlers, startOursFanout) })
		b.Run(name+clientgo, func(b *testing.B) { runFanout(b, handlers, startClientGoFanout) })
		b.Run(name+"impl=chan", func(b *testing.B) { channelFanout(b, handlers) })
	}
}

func channelFanout(b *testing.B, handlers int) {
	chans := make([]chan *corev1.ConfigMap, handlers)
	var wg sync.WaitGroup
	for h := range chans {
		chans[h] = make(chan *corev1.ConfigMap, 1024)
		wg.Go(func() {
			for range chans[h] {
			}
		})
	}
	base := configMap("ns", 0, 1)
	b.ReportAllocs()
	for i := range b.N {
		o := *base
		o.ResourceVersion = strconv.Itoa(i + 2)
		for _, c := range chans {
			c <- &o
		}
	}
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(handlers), "ns/event/handler")
}

// Workload 7: a producer Updates 1000 keys while the consumer takes about
// 50 µs per Pop. One op is one Update; ns/op is the producer's add latency.
func BenchmarkFIFOSlowConsumer(b *testing.B) {
	objs := make([]*corev1.ConfigMap, 1000)
	for i := range objs {
		objs[i] = configMap("ns", i, i+1)
	}
	pop := func(b *testing.B, add func(*corev1.ConfigMap), consume func(), closeFIFO func()) {
		var wg sync.WaitGroup
		wg.Go(consume)
		var worst time.Duration
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			t := time.Now()
			add(objs[i%len(objs)])
			if d := time.Since(t); d > worst {
				worst = d
			}
		}
		b.StopTimer()
		closeFIFO()
		wg.Wait()
		b.ReportMetric(float64(worst.Nanoseconds()), "max-add-ns")
	}
	b.Run("keys=1k/consumer=50us/"+ours, func(b *testing.B) {
		f := must(deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{}))
		ctx := context.Background()
		pop(b, func(o *corev1.ConfigMap) { _ = f.Update(o) }, func() {
			for f.Pop(ctx, func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error {
				time.Sleep(50 * time.Microsecond)
				return nil
			}) == nil {
			}
		}, f.Close)
	})
	b.Run("keys=1k/consumer=50us/"+clientgo, func(b *testing.B) {
		f := cache.NewDeltaFIFOWithOptions(cache.DeltaFIFOOptions{KeyFunction: cache.MetaNamespaceKeyFunc})
		pop(b, func(o *corev1.ConfigMap) { _ = f.Update(o) }, func() {
			for {
				_, err := f.Pop(func(any, bool) error {
					time.Sleep(50 * time.Microsecond)
					return nil
				})
				if err != nil {
					return
				}
			}
		}, f.Close)
	})
}
