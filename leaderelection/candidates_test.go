package leaderelection_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// Candidates in goroutines compete for one Lease on the fake API server,
// in a synctest bubble. Each round, the test ends the leader's Run (half
// of the candidates release the Lease, half let it expire) and holds it
// back until another candidate leads. Every term is recorded as [start,
// end) on the bubble's clock, which all candidates share: no two overlap.
func TestTermsOfTwoOrThreeCandidatesNeverOverlap(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d candidates", n), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { competeForRounds(t, n, 6) })
		})
	}
}

func competeForRounds(t *testing.T, n, rounds int) {
	mem := inMemory(t, fakeapiserver.New())
	ts := newTerms()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	stops := map[string]context.CancelFunc{} // guarded by mu: ends a candidate's current Run
	rejoin := map[string]chan struct{}{}     // lets a stopped candidate stand again
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("candidate-%d", i)
		cfg, _ := config(t, mem.Config(), "kube-system", "rounds", id, ts.callbacks(id, nil))
		cfg.ReleaseOnCancel = i%2 == 0
		el := must(leaderelection.New(cfg))
		rejoin[id] = make(chan struct{}, 1)
		wg.Go(func() {
			for ctx.Err() == nil {
				runCtx, stop := context.WithCancel(ctx)
				mu.Lock()
				stops[id] = stop
				mu.Unlock()
				if err := el.Run(runCtx); errors.Is(err, leaderelection.ErrLost) {
					t.Logf("%s: %v", id, err) // the terms below must still not overlap
				}
				stop()
				select {
				case <-rejoin[id]:
				case <-ctx.Done():
				}
			}
		})
	}

	prev := ""
	for r := range rounds {
		tm := awaitTerm(t, ts, takeoverBound+time.Minute, fmt.Sprintf("round %d", r))
		require.NotEqual(t, prev, tm.id, "round %d: the stopped leader was held back", r)
		if prev != "" {
			rejoin[prev] <- struct{}{}
		}
		time.Sleep(3 * retryPeriod) // let the leader renew a few times; no assertion depends on it
		mu.Lock()
		stops[tm.id]()
		mu.Unlock()
		prev = tm.id
	}
	cancel()
	wg.Wait()

	require.GreaterOrEqual(t, len(ts.all), rounds)
	requireNoOverlap(t, ts.all)
	for _, tm := range ts.all {
		t.Logf("%s led for %v", tm.id, tm.end.Sub(tm.start).Round(time.Millisecond))
	}
}
