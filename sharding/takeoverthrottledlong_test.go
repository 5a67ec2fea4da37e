package sharding_test

import (
	"bytes"
	"context"
	"io"
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

// A takeover answered 429 with a Retry-After of 30 s, far longer than
// the member Lease's duration (1 s), whose Lease someone then deletes.
// The Retry-After is honoured up to the Lease's duration, and at least a
// request timeout (the tests' 1.5 s) passes before the takeover is sent
// again: the wait survives the poll that records the Lease absent (a
// review found it dropped there, the create sent within 1 s). Then the
// member is taken over by a create, long before the 30 s: a dead
// member's objects wait for a server that asks for more no longer than
// for one more expiry.
func TestATakeoverThrottledForLongerThanItsLeaseIsSentAgainAfterItsDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const id = "throttledthendeleted"
		const retryAfter = 30 * time.Second
		var mu sync.Mutex
		var first time.Time
		var again []time.Duration // takeovers sent after the first, by time since it
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			name := sharding.LeaseName(ring, id)
			put := r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+name)
			post := false
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases") {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				post = bytes.Contains(body, []byte(name)) // the member's Lease, not the election's
			}
			if !put && !post {
				return fakeapiserver.Fault{}
			}
			mu.Lock()
			defer mu.Unlock()
			if first.IsZero() {
				if !put {
					return fakeapiserver.Fault{}
				}
				first = time.Now()
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: int(retryAfter / time.Second)}
			}
			again = append(again, time.Since(first))
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
		for {
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			throttled := !first.IsZero()
			mu.Unlock()
			if throttled {
				break
			}
		}
		require.NoError(t, leases.Delete().Namespace(c.ns).Resource("leases").Name(sharding.LeaseName(ring, id)).Do(ctx).Error())
		time.Sleep(4 * leaseDuration)

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, again, "the member was never taken over after its takeover was throttled: the Retry-After of %v was waited out in full, or more", retryAfter)
		timeout := renewDeadline / 2 // the sharder's request timeout
		require.GreaterOrEqual(t, again[0], timeout, "the takeover was sent again %v after a 429, before a request timeout", again[0])
		require.Less(t, again[0], retryAfter/2, "the takeover waited %v, near the Retry-After of %v, not the Lease's duration", again[0], retryAfter)
	})
}
