package leaderelection_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/workqueue"
)

// The elector times its own waits and attempts on Config.Clock, but a
// GET, like the release, keeps client-go's retries, and client-go waits
// out a 429's Retry-After on its own clock: here Config.Clock never
// moves, yet the candidate's first look, throttled for 1 s, is sent
// again 1 s later, and the candidate leads.
func TestAGetThrottledWithARetryAfterIsRetriedOnTheClientsClockNotConfigClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var mu sync.Mutex
		var gets []time.Time
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method != http.MethodGet {
				return fakeapiserver.Fault{}
			}
			mu.Lock()
			defer mu.Unlock()
			gets = append(gets, time.Now())
			if len(gets) == 1 {
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
			}
			return fakeapiserver.Fault{}
		}))
		clock := workqueue.NewFakeClock(time.Now()) // never stepped
		terms := make(chan span, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = bubbleCandidate(t, mem, "retried", "standby", terms, func(c *leaderelection.Config) { c.Clock = clock }).Run(ctx)
		})
		time.Sleep(time.Minute)
		cancel()
		wg.Wait()

		require.Len(t, collect(terms), 1, "the candidate led, though Config.Clock stood still")
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, gets, 2, "one look, throttled, and client-go's retry of it")
		require.Equal(t, time.Second, gets[1].Sub(gets[0]), "the retry waited out the Retry-After on client-go's clock")
	})
}
