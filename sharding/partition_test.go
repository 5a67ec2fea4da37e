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
	"github.com/listwatch/informer/testenv/faultproxy"
)

// term is one member term as its Run saw it.
type term struct {
	member   string
	deadline time.Time // the term's final End()
	ended    time.Time
}

// A member reaches the API server through a proxy, which is then
// blackholed: its renews hang. Its term's context ends by its last
// successful renew (before the cut) plus RenewDeadline. Once healed, it
// joins again under a new member id: the old id never comes back.
func TestAMemberThatCannotRenewStopsByItsRenewDeadlineAndRejoinsUnderANewID(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy := must(faultproxy.Start(cp.Addr()))
	defer proxy.Close()
	cfg := fast(cp.ConfigVia(proxy.Addr()))
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	started, ended := make(chan string, 4), make(chan term, 4)
	member := must(sharding.NewMember(sharding.MemberConfig{
		Client: must(leaderelection.NewClient(cfg)), Namespace: ns, Ring: ring, Name: "cut",
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: testLogger,
		Run: func(ctx context.Context, shard sharding.Shard) {
			started <- shard.Member
			<-ctx.Done()
			current, _ := leaderelection.TermOf(ctx)
			deadline := current.End()
			ended <- term{member: shard.Member, deadline: deadline, ended: time.Now()}
		},
	}))
	wg.Go(func() { member.Run(ctx) })
	guard := time.Minute // against hanging, not a timing
	first := receive(t, started, guard)

	proxy.Blackhole()
	cutAt := time.Now()
	stopped := receive(t, ended, guard)
	require.Equal(t, first, stopped.member)
	require.False(t, stopped.deadline.After(cutAt.Add(renewDeadline)), "the last renew was sent before the cut")
	require.False(t, stopped.ended.Before(stopped.deadline), "the term ended at its deadline, not before")
	t.Logf("cut off: the term's deadline came %v after the cut (at most RenewDeadline, %v); it ended %v after its deadline",
		stopped.deadline.Sub(cutAt).Round(time.Millisecond), renewDeadline, stopped.ended.Sub(stopped.deadline).Round(time.Millisecond))

	proxy.Heal()
	second := receive(t, started, guard)
	require.NotEqual(t, first, second, "a new term is a new member")
}

func receive[V any](t *testing.T, ch <-chan V, within time.Duration) V {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("nothing within %v", within)
		panic("unreachable")
	}
}
