package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// API Priority and Fairness answers a takeover 429 with a Retry-After:
// the server did not act, and asks not to be asked again for that long;
// an overloaded server answers 503 with one (the write not landed: read
// back, the Lease is at the version judged). A takeover is sent once
// (MaxRetries(0)), so client-go no longer waits the Retry-After out; the
// sharder must. Found by a review: the takeover was sent again a quarter
// RetryPeriod later, whatever the Retry-After said, 39 times in 5 s.
// Passing: no takeover of the member is sent again before the
// Retry-After has passed (here within the Lease's duration, 10 s, up to
// which it is honoured).
func TestATakeoverThrottledWithARetryAfterIsNotSentAgainBeforeIt(t *testing.T) {
	for name, status := range map[string]int{"429": http.StatusTooManyRequests, "503": http.StatusServiceUnavailable} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const id = "throttled"
				const retryAfter = 5 * time.Second
				var mu sync.Mutex
				var puts []time.Time // the sharder's PUTs of the member's Lease
				c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
					if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/"+sharding.LeaseName(ring, id)) {
						return fakeapiserver.Fault{}
					}
					mu.Lock()
					defer mu.Unlock()
					puts = append(puts, time.Now())
					if time.Since(puts[0]) < retryAfter {
						return fakeapiserver.Fault{Status: status, RetryAfter: int(retryAfter / time.Second)}
					}
					return fakeapiserver.Fault{}
				})
				ctx, cancel := context.WithCancel(t.Context())
				var wg sync.WaitGroup
				defer wg.Wait()
				defer cancel()
				leases := must(leaderelection.NewClient(c.cfg))
				createMemberLeaseFor(ctx, t, leases, c.ns, id, 10) // never renewed
				createOwnedBy(ctx, t, c.cfg, c.ns, id)
				startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{})
				time.Sleep(10*time.Second + 4*leaseDuration + retryAfter)

				mu.Lock()
				defer mu.Unlock()
				require.Greater(t, len(puts), 1, "the takeover was not sent twice: the test proves nothing")
				require.GreaterOrEqual(t, puts[1].Sub(puts[0]), retryAfter,
					"the takeover was answered %d with a Retry-After of %v, and sent again %v later", status, retryAfter, puts[1].Sub(puts[0]))
			})
		})
	}
}
