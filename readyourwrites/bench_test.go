package readyourwrites_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/workqueue"
)

// What the guard costs a controller: 10,000 keys, each reconcile reading
// its object from the cache and writing it back once (to the in-memory
// API server, so that the API server's own time is not what is measured),
// 4 workers. One op is one reconcile of every key. guard=on records each
// write and holds a key until its last write is in the cache; the
// records-peak metric is the most records it kept at once (they are
// dropped as the cache catches up). Compare the two with benchstat.
func BenchmarkReconcile10kKeys(b *testing.B) {
	const keys = 10_000
	for _, guarded := range []bool{false, true} {
		b.Run(fmt.Sprintf("guard=%v", map[bool]string{false: "off", true: "on"}[guarded]), func(b *testing.B) {
			inf, api := newCache(b)
			for i := range keys {
				if _, err := api.Create(configMap(fmt.Sprintf("cm-%05d", i))); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			wg.Go(func() { _ = inf.Run(ctx) })
			if err := inf.WaitFor(ctx, api.ResourceVersion()); err != nil {
				b.Fatal(err)
			}

			peak := &peakGauges{}
			guard, err := readyourwrites.New(readyourwrites.Options{Metrics: must(metrics.NewRegistry(peak))})
			if err != nil {
				b.Fatal(err)
			}
			cms := readyourwrites.Track(guard, inf)
			queue := workqueue.New(workqueue.Options[informer.Key]{})
			var done, target atomic.Int64
			finished := make(chan struct{}, 1)
			opts := workqueue.RunOptions[informer.Key]{Workers: 4}
			if guarded {
				opts.Gate = guard
			}
			wg.Go(func() {
				workqueue.Run(ctx, queue, func(_ context.Context, key informer.Key) (workqueue.Result, error) {
					cm, err := inf.Lister().Namespace(key.Namespace).Get(key.Name)
					if err != nil {
						return workqueue.Result{}, err
					}
					next := cm.DeepCopy()
					next.Data = map[string]string{"n": cm.ResourceVersion}
					written, err := api.Update(next)
					if err != nil {
						return workqueue.Result{}, err
					}
					if guarded {
						if err := cms.Wrote(key, written); err != nil {
							return workqueue.Result{}, err
						}
					}
					if done.Add(1) == target.Load() {
						finished <- struct{}{}
					}
					return workqueue.Result{}, nil
				}, opts)
			})

			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				target.Store(int64((i + 1) * keys))
				for k := range keys {
					queue.Add(informer.Key{Namespace: "demo", Name: fmt.Sprintf("cm-%05d", k)})
				}
				<-finished
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*keys), "ns/reconcile")
			if guarded {
				b.ReportMetric(float64(peak.peak.Load()), "records-peak")
			}
			queue.ShutDown()
		})
	}
}

// peakGauges is a metrics.Provider that keeps only the highest value each
// gauge was set to.
type peakGauges struct{ peak atomic.Int64 }

func (p *peakGauges) Counter(metrics.Desc, []string) (metrics.Counter, error) {
	return nopSeries{}, nil
}
func (p *peakGauges) Histogram(metrics.Desc, []string) (metrics.Histogram, error) {
	return nopSeries{}, nil
}
func (p *peakGauges) Gauge(metrics.Desc, []string) (metrics.Gauge, error) { return p, nil }
func (p *peakGauges) Set(v float64) {
	for n := int64(v); ; {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			return
		}
	}
}

type nopSeries struct{}

func (nopSeries) Add(float64)     {}
func (nopSeries) Observe(float64) {}
