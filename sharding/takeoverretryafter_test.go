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

// API Priority and Fairness answers a takeover 429 with a Retry-After of
// 5 s: the server did not act, and asks not to be asked again for 5 s.
// Before 5345930 client-go waited it out; the elector still does for
// its updates (docs/14: "the elector waits out its Retry-After"). A
// takeover is now sent once (MaxRetries(0)), and afterError leaves a 4xx
// refusal a suspect "sent again on the next pass": a quarter RetryPeriod
// later, whatever the Retry-After said, and once per suspect per pass
// while the server sheds load. Passing: no takeover of the member is sent
// again before the Retry-After has passed.
func TestATakeoverThrottledWithARetryAfterIsNotSentAgainBeforeIt(t *testing.T) {
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
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: int(retryAfter / time.Second)}
			}
			return fakeapiserver.Fault{}
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(c.cfg))
		createMemberLease(ctx, t, leases, c.ns, id) // held by id for 1 s, never renewed
		createOwnedBy(ctx, t, c.cfg, c.ns, id)
		startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{})
		time.Sleep(4*leaseDuration + retryAfter)

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, puts, "no takeover was sent: the test proves nothing")
		within := 0
		for _, at := range puts[1:] {
			if at.Sub(puts[0]) < retryAfter {
				within++
			}
		}
		require.Zero(t, within,
			"the takeover was answered 429 with a Retry-After of %v, and sent again %d times within it (every %v)",
			retryAfter, within, retryPeriod/4)
	})
}

// As above, with the 503 and Retry-After an overloaded API server sends
// (the write not landed): afterError reads the Lease back, finds the
// version judged, and sends the takeover again on the next pass, a
// quarter RetryPeriod later: a PUT and a GET per suspect per pass to a
// server that asked for 5 s of quiet. Passing: no takeover of the
// member is sent again before the Retry-After has passed.
func TestATakeoverAnswered503WithARetryAfterIsNotSentAgainBeforeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const id = "shed"
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
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable, RetryAfter: int(retryAfter / time.Second)}
			}
			return fakeapiserver.Fault{}
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(c.cfg))
		createMemberLease(ctx, t, leases, c.ns, id) // held by id for 1 s, never renewed
		createOwnedBy(ctx, t, c.cfg, c.ns, id)
		startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{})
		time.Sleep(4*leaseDuration + retryAfter)

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, puts, "no takeover was sent: the test proves nothing")
		within := 0
		for _, at := range puts[1:] {
			if at.Sub(puts[0]) < retryAfter {
				within++
			}
		}
		require.Zero(t, within,
			"the takeover was answered 503 with a Retry-After of %v, and sent again %d times within it (every %v)",
			retryAfter, within, retryPeriod/4)
	})
}
