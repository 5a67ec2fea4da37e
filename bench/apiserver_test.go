package bench

// Workloads 9 and 10: against the real local etcd + kube-apiserver that
// TestMain starts (testenv).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	cgqueue "k8s.io/client-go/util/workqueue"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// unlimited returns cfg with client-side rate limiting off, so that only
// the libraries differ, not how long each waited for a token.
func unlimited(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	return cfg
}

func coreClient(b *testing.B, cfg *rest.Config) *rest.RESTClient {
	c, err := testenv.CoreV1Client(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// createConfigMaps creates n small ConfigMaps in ns, 16 at a time.
func createConfigMaps(b *testing.B, cfg *rest.Config, ns string, n int) {
	client := coreClient(b, unlimited(cfg))
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				cm := configMap(ns, i, 0)
				cm.ResourceVersion = ""
				if err := client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(context.Background()).Error(); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatalf("creating ConfigMaps: %v", err)
	}
}

// queueRunner runs workers over a queue of keys; add enqueues one key.
type queueRunner struct {
	add  func(string)
	stop func()
}

func runOurs(workers int, reconcile func(string)) queueRunner {
	q := workqueue.New(workqueue.Options[string]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		workqueue.Run(ctx, q, func(_ context.Context, key string) (workqueue.Result, error) {
			reconcile(key)
			return workqueue.Result{}, nil
		}, workqueue.RunOptions[string]{Workers: workers})
	}()
	return queueRunner{add: q.Add, stop: func() { q.ShutDown(); cancel(); <-done }}
}

func runClientGo(workers int, reconcile func(string)) queueRunner {
	q := cgqueue.NewTyped[string]()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				reconcile(k)
				q.Done(k)
			}
		})
	}
	return queueRunner{add: q.Add, stop: func() { q.ShutDown(); wg.Wait() }}
}

// Workload 9: reconcile throughput. m keys are queued; each reconcile
// makes k=1 API call (a PATCH) through a fault proxy that adds the RTT,
// with W workers and a client rate limit. One op reconciles every key once.
// model-rec/s is min(QPS/k, W/(k·RTT)), the ceiling the knobs allow
// (0 when neither limits).
func BenchmarkReconcileThroughput(b *testing.B) {
	cp := testenv.Shared(b)
	const m = 50 // the StarRocks post's 50 custom resources
	rtts := []time.Duration{0, 50 * time.Millisecond}
	workerCounts := []int{1, 10}
	if full() {
		rtts = append(rtts, 200*time.Millisecond)
		workerCounts = append(workerCounts, 50)
	}
	ns := cp.Namespace(b)
	createConfigMaps(b, cp.Config(), ns, m)
	proxy, proxied := cp.Proxy(b)
	keysToReconcile := make([]string, m)
	for i := range keysToReconcile {
		keysToReconcile[i] = "cm-" + strconv.Itoa(i)
	}
	gen := 0
	for _, rtt := range rtts {
		for _, workers := range workerCounts {
			for _, qps := range []float32{20, -1} {
				qpsName := "qps=20burst30"
				if qps < 0 {
					qpsName = "qps=unlimited"
				}
				for _, impl := range []struct {
					name string
					run  func(int, func(string)) queueRunner
				}{{ours, runOurs}, {clientgo, runClientGo}} {
					name := fmt.Sprintf("keys=%d/rtt=%s/workers=%d/%s/%s", m, rtt, workers, qpsName, impl.name)
					b.Run(name, func(b *testing.B) {
						proxy.SetRTT(rtt)
						defer proxy.SetRTT(0)
						cfg := rest.CopyConfig(proxied)
						cfg.QPS, cfg.Burst = qps, 30
						if qps < 0 {
							cfg.Burst = 0
						}
						client := coreClient(b, cfg)
						var pending sync.WaitGroup
						var failures atomic.Int64
						reconcile := func(key string) {
							defer pending.Done()
							patch := fmt.Sprintf(`{"metadata":{"annotations":{"gen":"%d"}}}`, gen)
							if err := client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name(key).Body([]byte(patch)).Do(context.Background()).Error(); err != nil {
								failures.Add(1)
							}
						}
						r := impl.run(workers, reconcile)
						defer r.stop()
						// Warm the connection so its setup is not measured.
						pending.Add(1)
						reconcile(keysToReconcile[0])
						b.ReportAllocs()
						b.ResetTimer()
						for range b.N {
							gen++
							pending.Add(m)
							for _, k := range keysToReconcile {
								r.add(k)
							}
							pending.Wait()
						}
						b.StopTimer()
						if f := failures.Load(); f > 0 {
							b.Fatalf("%d reconciles failed", f)
						}
						b.ReportMetric(float64(m*b.N)/b.Elapsed().Seconds(), "rec/s")
						model := 0.0
						if qps > 0 {
							model = float64(qps)
						}
						if rtt > 0 {
							if byRTT := float64(workers) / rtt.Seconds(); model == 0 || byRTT < model {
								model = byRTT
							}
						}
						b.ReportMetric(model, "model-rec/s")
					})
				}
			}
		}
	}
}

// Workload 10: watch throughput. Writers update ConfigMaps paced at
// 1000/s, each carrying its send time; the informer's handler records
// event-to-handler latency. One op is one update.
func BenchmarkWatchLatency(b *testing.B) {
	cp := testenv.Shared(b)
	const objects = 100
	ns := cp.Namespace(b)
	createConfigMaps(b, cp.Config(), ns, objects)
	client := coreClient(b, unlimited(cp.Config()))
	run := 0
	for _, impl := range []string{ours, clientgo} {
		b.Run("rate=1000/s/"+impl, func(b *testing.B) {
			run++
			runID := strconv.Itoa(run)
			var mu sync.Mutex
			latencies := make([]time.Duration, 0, b.N)
			var received sync.WaitGroup
			received.Add(b.N)
			onUpdate := func(cm *corev1.ConfigMap) {
				if cm.Annotations["run"] != runID {
					return
				}
				sent, err := strconv.ParseInt(cm.Annotations["sent"], 10, 64)
				if err != nil {
					return
				}
				mu.Lock()
				latencies = append(latencies, time.Since(time.Unix(0, sent)))
				mu.Unlock()
				received.Done()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if impl == ours {
				lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](unlimited(cp.Config()), codecsScheme, reflector.Source{
					Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: ns,
				})
				if err != nil {
					b.Fatal(err)
				}
				inf, err := sharedinformer.New(sharedinformer.Options[*corev1.ConfigMap]{ListerWatcher: lw, OnError: quietOnError, Logger: discard})
				if err != nil {
					b.Fatal(err)
				}
				_, _ = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
					UpdateFunc: func(_, cm *corev1.ConfigMap) { onUpdate(cm) },
				}, sharedinformer.HandlerOptions{})
				go func() { _ = inf.Run(ctx) }()
				<-inf.Synced()
			} else {
				inf := cache.NewSharedIndexInformer(cache.NewListWatchFromClient(client, "configmaps", ns, fields.Everything()), &corev1.ConfigMap{}, 0, cache.Indexers{})
				_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
					UpdateFunc: func(_, obj any) { onUpdate(obj.(*corev1.ConfigMap)) },
				})
				go inf.RunWithContext(ctx)
				<-inf.HasSyncedChecker().Done()
			}
			// Every update is an event; pace them at one per millisecond
			// from 32 writers (one PATCH takes several milliseconds here).
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range 32 {
				wg.Go(func() {
					for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
						time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
						patch := fmt.Sprintf(`{"metadata":{"annotations":{"run":%q,"seq":"%d","sent":"%d"}}}`, runID, i, time.Now().UnixNano())
						if err := client.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("cm-" + strconv.Itoa(i%objects)).Body([]byte(patch)).Do(context.Background()).Error(); err != nil {
							b.Error(err)
							received.Done()
						}
					}
				})
			}
			wg.Wait()
			received.Wait()
			b.StopTimer()
			slices.Sort(latencies)
			if len(latencies) > 0 {
				b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
