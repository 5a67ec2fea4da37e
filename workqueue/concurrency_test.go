package workqueue

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Producers and workers hammer one queue on the real clock (run with
// -race). Each key has three counters:
//
//   - version, bumped by a producer just before each Add of the key;
//   - seen, the highest version a reconcile read when it started;
//   - inFlight, how many reconciles of the key are running.
//
// A reconcile that starts after the key's last Add reads its final
// version, so seen == version at the end proves every key was processed
// at least once after its last Add. inFlight never exceeding 1 proves no
// key was processed by two workers at once. ShutDownWithDrain returning
// nil with seen == version proves the drain lost nothing.
//
// Reconciles also fail now and then, and producers also AddAfter, so the
// timer and the rate limiter run concurrently too. Neither bumps a
// version: a shutdown drops delayed keys by design. A Metrics on the trace
// hook checks that the events add up.
func TestManyProducersAndWorkersProcessEveryKeyAfterItsLastAddAndNeverTwiceAtOnce(t *testing.T) {
	const producers, workers, keys, addsPerProducer = 8, 16, 300, 3000
	var version, seen [keys]atomic.Int64
	var inFlight [keys]atomic.Int32
	var overlaps, reconciles atomic.Int64

	metrics := NewMetrics()
	q := New(Options[int]{
		RateLimiter: must(NewExponentialRateLimiter[int](time.Microsecond, time.Millisecond)),
		Trace:       metrics.Observe,
	})
	reconcile := func(_ context.Context, k int) (Result, error) {
		if inFlight[k].Add(1) != 1 {
			overlaps.Add(1)
		}
		defer inFlight[k].Add(-1)
		reconciles.Add(1)
		v := version[k].Load()
		for old := seen[k].Load(); v > old && !seen[k].CompareAndSwap(old, v); old = seen[k].Load() {
		}
		runtime.Gosched() // give an overlapping worker its chance
		if rand.IntN(10) == 0 {
			return Result{}, errors.New("transient")
		}
		return Result{}, nil
	}
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		Run(context.Background(), q, reconcile, RunOptions[int]{Workers: workers, OnError: func(int, error) {}})
	}()

	var producing sync.WaitGroup
	for p := range producers {
		producing.Go(func() {
			r := rand.New(rand.NewPCG(uint64(p), 42))
			for range addsPerProducer {
				k := r.IntN(keys)
				if r.IntN(8) == 0 {
					q.AddAfter(k, time.Duration(r.IntN(500))*time.Microsecond)
					continue
				}
				version[k].Add(1)
				q.Add(k)
			}
		})
	}
	producing.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	require.NoError(t, q.ShutDownWithDrain(ctx))
	<-ran // Run returns by itself once the queue is drained

	assert.Zero(t, overlaps.Load(), "a key was processed by two workers at once")
	for k := range keys {
		require.Equal(t, version[k].Load(), seen[k].Load(), "key %d was not processed after its last Add", k)
	}
	s := metrics.Snapshot(time.Now())
	assert.Equal(t, 0, s.Depth)
	assert.Equal(t, 0, s.Processing)
	assert.Equal(t, int(reconciles.Load()), s.WorkDuration.Count, "one done event per reconcile")
	assert.Equal(t, s.Adds, s.QueueWait.Count, "every key that entered the queue left it")
	t.Logf("%d reconciles for %d adds; %d retries", reconciles.Load(), producers*addsPerProducer, s.Retries)
}
