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
)

// A 429 is the server refusing a request it did not act on (API Priority
// and Fairness), so a renew answered 429 with a Retry-After is sent
// again once that wait is over, within the same attempt, as client-go
// would: here every other PUT of the leader's is throttled for 1 s, and
// each is followed by the same renew 1 s later, not a RetryPeriod (2 s
// and its jitter) later by the elector's next attempt. The leader keeps
// its one term throughout.
func TestALeadersRenewThrottledWithARetryAfterIsSentAgainWithinItsAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		type put struct {
			at        time.Time
			throttled bool
		}
		var mu sync.Mutex
		var puts []put
		mem := inMemory(t, fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method != http.MethodPut {
				return fakeapiserver.Fault{}
			}
			mu.Lock()
			defer mu.Unlock()
			throttled := len(puts)%2 == 0
			puts = append(puts, put{time.Now(), throttled})
			if throttled {
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
			}
			return fakeapiserver.Fault{}
		}))
		terms := make(chan span, 1)
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = bubbleCandidate(t, mem, "throttled", "leader", terms, func(c *leaderelection.Config) {
				c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
			}).Run(ctx)
		})
		time.Sleep(time.Minute)
		stopped := time.Now()
		cancel()
		wg.Wait()

		got := collect(terms)
		require.Len(t, got, 1, "the leader led once")
		require.Equal(t, stopped, got[0].end, "its term lasted until Run's context ended")
		mu.Lock()
		defer mu.Unlock()
		require.Greater(t, len(puts), 10, "the leader renewed through the minute")
		for i := 0; i+1 < len(puts); i += 2 {
			require.True(t, puts[i].throttled)
			gap := puts[i+1].at.Sub(puts[i].at)
			require.True(t, gap >= time.Second && gap < 1500*time.Millisecond,
				"renew %d throttled with Retry-After 1 s was sent again %v later, not within its attempt", i/2, gap)
		}
	})
}
