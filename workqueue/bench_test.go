package workqueue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/informer"
)

// startWorkers starts n goroutines that Get and Done keys until Get
// fails, and returns a WaitGroup that is done when they all have.
func startWorkers[K comparable](ctx context.Context, q *Queue[K], n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				key, err := q.Get(ctx)
				if err != nil {
					return
				}
				q.Done(key)
			}
		})
	}
	return &wg
}

// benchCycle times b.N keys through Add, Get and Done: one producer adds
// keys from a space of 100,000 (so some are deduplicated), n workers take
// them, and the clock stops only when the queue is drained.
func benchCycle(b *testing.B, workers int, trace informer.TraceHook) {
	q := New(Options[int]{Trace: trace})
	ctx := context.Background()
	wg := startWorkers(ctx, q, workers)
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		q.Add(n % 100_000)
	}
	if err := q.ShutDownWithDrain(ctx); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	b.StopTimer()
}

// The add/get/done cycle with 1, 4 and 16 workers.
func BenchmarkAddGetDone(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		b.Run(fmt.Sprint("workers=", workers), func(b *testing.B) { benchCycle(b, workers, nil) })
	}
}

// The cost of tracing on that cycle (1 worker): no hook, and Metrics.
// With no hook no event is built and no key formatted.
func BenchmarkAddGetDoneTrace(b *testing.B) {
	b.Run("nil", func(b *testing.B) { benchCycle(b, 1, nil) })
	b.Run("metrics", func(b *testing.B) { benchCycle(b, 1, NewMetrics().Observe) })
}

// Contended Add: 1,000,000 keys already queued and 1,000 workers taking
// them, while GOMAXPROCS goroutines Add random keys from a space of
// 2,000,000 (so about half are already queued and deduplicated). Every
// call fights for the one lock. The setup (the 1M keys) is not timed.
func BenchmarkContendedAdd(b *testing.B) {
	const queued, workers = 1_000_000, 1000
	q := New(Options[int]{})
	for k := range queued {
		q.Add(k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wg := startWorkers(ctx, q, workers)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			q.Add(r.IntN(2 * queued))
		}
	})
	b.StopTimer()
	cancel()
	wg.Wait()
	q.ShutDown()
}

// AddRateLimited churn with the default limiter on a FakeClock: 1,000
// keys fail again and again, one in eight succeeds (Forget), and every
// 1,024 failures a second passes and the keys that came due are worked
// off. It times the limiter's bookkeeping and the heap.
func BenchmarkAddRateLimitedChurn(b *testing.B) {
	q, clock := newFake(Options[int]{})
	ctx := context.Background()
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		key := n % 1000
		q.AddRateLimited(key)
		if n%8 == 0 {
			q.Forget(key)
		}
		if n%1024 == 1023 {
			clock.Step(time.Second)
			for q.Len() > 0 {
				key, _ := q.Get(ctx)
				q.Done(key)
			}
		}
	}
	q.ShutDown()
}

// AddAfter with random delays from 1ms to 10s over 100,000 keys: the heap
// at scale. On the FakeClock a millisecond passes every 100 calls, so keys
// keep coming due; on the real clock the timer fires on its own, and
// re-arming it is part of the cost.
func BenchmarkAddAfterRandomDelays(b *testing.B) {
	b.Run("fake-clock", func(b *testing.B) {
		q, clock := newFake(Options[int]{})
		benchAddAfter(b, q, func(n int) {
			if n%100 == 99 {
				clock.Step(time.Millisecond)
			}
		})
	})
	b.Run("real-clock", func(b *testing.B) {
		benchAddAfter(b, New(Options[int]{}), func(int) {})
	})
}

func benchAddAfter(b *testing.B, q *Queue[int], each func(n int)) {
	r := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		q.AddAfter(n%100_000, time.Millisecond+time.Duration(r.Int64N(int64(10*time.Second))))
		each(n)
	}
	q.ShutDown()
}
