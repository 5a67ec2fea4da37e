package sharding_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A Member is one replica's membership: one term at a time, and
// MemberConfig.Run for that term alone. A second Member.Run, while the
// first runs, began a second term under a second id: two members in one
// replica, each given its share of the objects, and the replica's Run
// called twice at once, though a Run written for one term (informers
// with the stable name the docs ask for, one metrics Registry) cannot
// run beside itself. Sharder.Run refuses a second Run; Member.Run must
// too.
//
// Passing: the second Run returns an error at once, and MemberConfig.Run
// never runs for two ids at once.
func TestASecondRunOfOneMemberIsRefusedAndStartsNoSecondTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		var running, most atomic.Int32
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: "a",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, _ sharding.Shard) {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				<-ctx.Done()
			},
		}))
		wg.Go(func() { member.Run(ctx) })
		synctest.Wait()
		second := make(chan error, 1)
		wg.Go(func() { second <- member.Run(ctx) })

		time.Sleep(leaseDuration) // simulated: time for a second term to begin
		require.EqualValues(t, 1, most.Load(), "MemberConfig.Run ran for two ids at once")
		select {
		case err := <-second:
			require.Error(t, err, "the second Run returned, with no error")
		default:
			t.Fatal("the second Run of the Member is still running")
		}
	})
}
