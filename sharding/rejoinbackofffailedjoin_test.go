package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A member's Run gives up a second into every term, on an API server
// that answers every other create of a Lease 500 without making it (an
// overloaded server: the same one under which an informer fails to
// sync). Such a create may have landed, so the id it was sent for finds
// its Lease absent and joins no more: no term began. That join is no
// term Run ended, and none another way either; it breaks no run of
// give-ups. Before, it started the backoff over: the member rejoined
// every couple of seconds, as if it had none.
//
// Passing: in a minute, about as few terms begin as without the failed
// joins (TestAMemberWhoseTermsEndAtOnceRejoinsAfterAGrowingBackoff),
// each failed join adding a RetryPeriod or so.
func TestAJoinThatNeverBeganATermDoesNotStartTheRejoinBackoffOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var creates atomic.Int32
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases") && creates.Add(1)%2 == 0 {
				return fakeapiserver.Fault{Status: http.StatusInternalServerError}
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		var terms atomic.Int32
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(net.Config())), Namespace: "default", Ring: ring, Name: "c",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(context.Context, sharding.Shard) {
				terms.Add(1)
				time.Sleep(time.Second) // simulated: it gives up
			},
		}))
		var wg sync.WaitGroup
		wg.Go(func() { member.Run(ctx) })
		time.Sleep(time.Minute) // simulated
		cancel()
		wg.Wait()
		t.Logf("%d terms began in a minute, %d creates sent", terms.Load(), creates.Load())
		// Waits of 0.5, 1, 2, 4, 8, 16, 30 s after terms of 1 s, and a
		// failed join of about 1.5 s between two terms: 7 terms.
		require.LessOrEqual(t, terms.Load(), int32(10), "a join that never began a term started the rejoin backoff over")
		require.GreaterOrEqual(t, terms.Load(), int32(5), "the member goes on trying")
	})
}
