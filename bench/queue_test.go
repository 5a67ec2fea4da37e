package bench

// Workloads 1–3: the workqueue on its own.

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cgqueue "k8s.io/client-go/util/workqueue"

	"github.com/listwatch/informer/workqueue"
)

// queueOps is the part of a work queue these workloads use, so the same
// code drives both implementations.
type queueOps struct {
	add      func(string)
	get      func() (string, bool) // false once shut down
	done     func(string)
	shutDown func()
}

func oursQueue() queueOps {
	q := workqueue.New(workqueue.Options[string]{})
	ctx := context.Background()
	return queueOps{
		add: q.Add,
		get: func() (string, bool) {
			k, err := q.Get(ctx)
			return k, err == nil
		},
		done:     q.Done,
		shutDown: q.ShutDown,
	}
}

func clientGoQueue() queueOps {
	q := cgqueue.NewTyped[string]()
	return queueOps{
		add: q.Add,
		get: func() (string, bool) {
			k, shutdown := q.Get()
			return k, !shutdown
		},
		done:     q.Done,
		shutDown: q.ShutDown,
	}
}

var queues = []struct {
	impl string
	new  func() queueOps
}{{ours, oursQueue}, {clientgo, clientGoQueue}}

func keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "ns/obj-" + strconv.Itoa(i)
	}
	return out
}

// Workload 1: one op is a whole cycle: n distinct keys added, and every one
// of them got and done by the workers.
func BenchmarkQueueCycle(b *testing.B) {
	for _, n := range sizes([]int{1000}, 100_000) {
		ks := keys(n)
		for _, workers := range []int{1, 8, 64} {
			for _, impl := range queues {
				b.Run("keys="+count(n)+"/workers="+strconv.Itoa(workers)+"/"+impl.impl, func(b *testing.B) {
					q := impl.new()
					var wg sync.WaitGroup
					var pending sync.WaitGroup
					for range workers {
						wg.Go(func() {
							for {
								k, ok := q.get()
								if !ok {
									return
								}
								q.done(k)
								pending.Done()
							}
						})
					}
					b.ReportAllocs()
					for b.Loop() {
						pending.Add(n)
						for _, k := range ks {
							q.add(k)
						}
						pending.Wait()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
					q.shutDown()
					wg.Wait()
				})
			}
		}
	}
}

// Workload 2: Add while the queue holds many keys and 1000 workers, each
// holding its key for 1 ms, fight over the lock. One op is one Add of a
// new key; the workers put back what they finish, so the queue stays full.
func BenchmarkQueueContendedAdd(b *testing.B) {
	for _, n := range sizes([]int{100_000}, 1_000_000) {
		ks := keys(n)
		for _, impl := range queues {
			b.Run("queued="+count(n)+"/workers=1000/"+impl.impl, func(b *testing.B) {
				q := impl.new()
				for _, k := range ks {
					q.add(k)
				}
				var wg sync.WaitGroup
				for range 1000 {
					wg.Go(func() {
						for {
							k, ok := q.get()
							if !ok {
								return
							}
							time.Sleep(time.Millisecond)
							q.done(k)
							q.add(k)
						}
					})
				}
				time.Sleep(50 * time.Millisecond) // let every worker hold a key
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					q.add("new/" + strconv.Itoa(i))
					i++
				}
				b.StopTimer()
				q.shutDown()
				wg.Wait()
			})
		}
	}
}

// rateLimitedOps is the rate-limited part of a queue.
type rateLimitedOps struct {
	queueOps
	addRateLimited func(string)
	addAfter       func(string, time.Duration)
	forget         func(string)
}

var rateLimitedQueues = []struct {
	impl string
	new  func() rateLimitedOps
}{
	{ours, func() rateLimitedOps {
		q := workqueue.New(workqueue.Options[string]{})
		ctx := context.Background()
		return rateLimitedOps{
			queueOps: queueOps{add: q.Add, done: q.Done, shutDown: q.ShutDown, get: func() (string, bool) {
				k, err := q.Get(ctx)
				return k, err == nil
			}},
			addRateLimited: q.AddRateLimited,
			addAfter:       q.AddAfter,
			forget:         q.Forget,
		}
	}},
	{clientgo, func() rateLimitedOps {
		q := cgqueue.NewTypedRateLimitingQueue(cgqueue.DefaultTypedControllerRateLimiter[string]())
		return rateLimitedOps{
			queueOps: queueOps{add: q.Add, done: q.Done, shutDown: q.ShutDown, get: func() (string, bool) {
				k, shutdown := q.Get()
				return k, !shutdown
			}},
			addRateLimited: q.AddRateLimited,
			addAfter:       q.AddAfter,
			forget:         q.Forget,
		}
	}},
}

// Workload 3: retries and delays with both libraries' default controller
// rate limiter (per-key exponential 5ms…1000s, overall 10 qps burst 100).
// "churn": AddRateLimited over 1000 keys while 8 workers Get, Forget and
// Done. "after": AddAfter with random delays up to 10 ms over 10k keys.
// One op is one add; keys come due and are processed meanwhile.
func BenchmarkQueueRateLimited(b *testing.B) {
	for _, mode := range []string{"churn", "after"} {
		for _, impl := range rateLimitedQueues {
			b.Run(mode+"/"+impl.impl, func(b *testing.B) {
				q := impl.new()
				var processed atomic.Int64
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						for {
							k, ok := q.get()
							if !ok {
								return
							}
							q.forget(k)
							q.done(k)
							processed.Add(1)
						}
					})
				}
				ks := keys(10_000)
				rng := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if mode == "churn" {
						q.addRateLimited(ks[i%1000])
					} else {
						q.addAfter(ks[i%len(ks)], time.Duration(rng.Int64N(int64(10*time.Millisecond))))
					}
					i++
				}
				b.StopTimer()
				q.shutDown()
				wg.Wait()
				b.ReportMetric(float64(processed.Load())/float64(b.N), "processed/add")
			})
		}
	}
}
