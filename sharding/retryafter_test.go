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
)

// As TestAMemberDoesNotBurnIDsOnCreatesTheServerRefused, with the 429 a
// real API server sends: API Priority and Fairness names a Retry-After
// (fakeapiserver.Fault.RetryAfter: "as a real server's 429 does").
// The elector sends each create once and sees the 429 itself, so the
// member keeps its id. (Before, client-go waited the Retry-After out to
// retry, the attempt timed out meanwhile, the refused create counted as
// possibly landed, and the member burned an id on every one.)
func TestAMemberDoesNotBurnIDsOnCreatesRefusedWithARetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var mu sync.Mutex
		names := map[string]bool{}
		refusing := true
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/leases/") {
				names[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]] = true
			}
			if r.Method == http.MethodPost && refusing {
				return fakeapiserver.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		terms := runRecordingMember(ctx, must(leaderelection.NewClient(net.Config())))
		time.Sleep(10 * time.Second)
		mu.Lock()
		refusing = false
		mu.Unlock()
		time.Sleep(5 * time.Second)
		cancel()
		started := terms()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, started, 1)
		require.Len(t, names, 1, "the member went through %d ids (%v) while creates were refused with a Retry-After; none of them ever had a Lease", len(names), names)
	})
}
