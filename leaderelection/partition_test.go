package leaderelection_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
)

// The leader reaches the API server through a proxy, which is then
// blackholed: its renews hang. Its leading context ends by its last
// successful renew plus RenewDeadline, before the Lease can expire for
// anyone; the standby leads only after the Lease expired; no overlap.
func TestABlackholedLeaderStopsBeforeItsLeaseExpiresAndTheStandbyWaitsForExpiry(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy := must(faultproxy.Start(cp.Addr()))
	defer proxy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ts := newTerms()
	guard := takeoverBound + time.Minute // a guard against hanging, not a timing

	cfgA, _ := config(t, cp.ConfigVia(proxy.Addr()), ns, "partitioned", "behind-proxy", ts.callbacks("behind-proxy", nil))
	a := must(leaderelection.New(cfgA))
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx) }()
	awaitTerm(t, ts, guard, "the candidate behind the proxy leads")

	sawA := make(chan struct{})
	var once sync.Once
	cfgB, _ := config(t, cp.Config(), ns, "partitioned", "direct", ts.callbacks("direct", func(id string) {
		if id == "behind-proxy" {
			once.Do(func() { close(sawA) })
		}
	}))
	b := must(leaderelection.New(cfgB))
	go b.Run(ctx)
	<-sawA

	// Watch the Lease as the admin, to know the old leader's last write
	// that landed (a renew can land while its answer is blackholed).
	admin := must(leaderelection.NewClient(cp.Config()))
	var lastOfA *coordinationv1.Lease // written by the poller until polled closes
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for ctx.Err() == nil {
			l := &coordinationv1.Lease{}
			if admin.Get().Namespace(ns).Resource("leases").Name("partitioned").Do(ctx).Into(l) == nil {
				if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "behind-proxy" {
					return
				}
				lastOfA = l
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	proxy.Blackhole()
	var errA error
	select {
	case errA = <-aDone:
	case <-time.After(guard):
		t.Fatal("the blackholed leader's Run did not return")
	}
	require.ErrorIs(t, errA, leaderelection.ErrLost)
	bTerm := awaitTerm(t, ts, guard, "the direct candidate leads")
	require.Equal(t, "direct", bTerm.id)
	<-polled

	ts.mu.Lock()
	aTerm := ts.all[0]
	ts.mu.Unlock()
	lastRenewSent := aTerm.deadline.Add(-renewDeadline) // the leader's own last success
	lastLanded := lastOfA.Spec.RenewTime.Time           // the last renew the API server stored
	t.Logf("old leader: last successful renew %v before its context ended (renew deadline %v); "+
		"standby led %v after the last stored renew (lease %v)",
		aTerm.end.Sub(lastRenewSent).Round(time.Millisecond), renewDeadline,
		bTerm.start.Sub(lastLanded).Round(time.Millisecond), leaseDuration)

	// The term's end is its last known success plus RenewDeadline, and
	// that success is at or before the last stored one (µs: MicroTime).
	require.False(t, lastLanded.Add(time.Microsecond).Before(lastRenewSent))
	require.False(t, aTerm.end.Before(aTerm.deadline), "the context ended at its deadline, not before")
	require.True(t, aTerm.end.Before(lastLanded.Add(leaseDuration)),
		"the old leader stopped at %v, after its Lease could expire at %v", aTerm.end, lastLanded.Add(leaseDuration))
	require.True(t, bTerm.start.After(lastLanded.Add(leaseDuration)),
		"the standby led at %v, before the old Lease expired at %v", bTerm.start, lastLanded.Add(leaseDuration))
	require.True(t, bTerm.start.After(aTerm.end))
	require.False(t, errors.Is(errA, context.Canceled))
}
