package sharding_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// Every member term has a Lease of its own, so a fence counted per Lease
// would be the same for every member. The fence must order member terms
// by when they began: a member that joins after another holds the
// greater fence. (It does not order the owners of one object: see
// docs/16, "What it does not guarantee".)
func TestAMemberThatJoinsLaterHoldsTheGreaterFence(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	cfg := fast(cp.Config())
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	join := func(name string) uint64 {
		fences := make(chan uint64, 1)
		member := must(sharding.NewMember(sharding.MemberConfig{
			Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: name,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
			Run: func(ctx context.Context, shard sharding.Shard) {
				term, _ := leaderelection.TermOf(ctx)
				select {
				case fences <- term.Fence:
				default: // a later term of this replica: not this test's
				}
				<-ctx.Done()
			},
		}))
		wg.Go(func() { member.Run(ctx) })
		return receive(t, fences, time.Minute) // against hanging, not a timing
	}
	early := join("early")
	later := join("later")
	require.Greater(t, later, early, "the member that joined later does not hold the greater fence")
}
