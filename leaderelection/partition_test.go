package leaderelection_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// The leader is blackholed: from a moment on, its requests hang, neither
// answered nor refused, until their AttemptTimeout. Its leading context
// ends by its last successful renew plus RenewDeadline, before the Lease
// can expire for anyone; the standby leads only after the Lease expired;
// no overlap. On the fake API server, in a synctest bubble, so the
// bounds below hold to the nanosecond of simulated time.
func TestABlackholedLeaderStopsBeforeItsLeaseExpiresAndTheStandbyWaitsForExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { blackholedLeader(t) })
}

func blackholedLeader(t *testing.T) {
	srv := fakeapiserver.New()
	var cut atomic.Bool
	memA := faultySide(srv, &cut, fakeapiserver.Fault{Hang: true})
	defer memA.Close()
	direct := inMemory(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	ts := newTerms()
	guard := takeoverBound + time.Minute // a guard against hanging, not a timing

	cfgA, _ := config(t, memA.Config(), "kube-system", "partitioned", "blackholed", ts.callbacks("blackholed", nil))
	a := must(leaderelection.New(cfgA))
	aDone := make(chan error, 1)
	go func() { aDone <- a.Run(ctx) }()
	awaitTerm(t, ts, guard, "the candidate to be blackholed leads")

	sawA := make(chan struct{})
	var once sync.Once
	cfgB, _ := config(t, direct.Config(), "kube-system", "partitioned", "direct", ts.callbacks("direct", func(id string) {
		if id == "blackholed" {
			once.Do(func() { close(sawA) })
		}
	}))
	b := must(leaderelection.New(cfgB))
	wg.Go(func() { b.Run(ctx) })
	<-sawA

	// Watch the Lease as the admin, to know the old leader's last write
	// that landed.
	admin := must(leaderelection.NewClient(direct.Config()))
	var lastOfA *coordinationv1.Lease // written by the poller until polled closes
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for ctx.Err() == nil {
			l := &coordinationv1.Lease{}
			if admin.Get().Namespace("kube-system").Resource("leases").Name("partitioned").Do(ctx).Into(l) == nil {
				if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "blackholed" {
					return
				}
				lastOfA = l
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	cut.Store(true)
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
	require.False(t, aTerm.end.After(lastLanded.Add(renewDeadline+time.Microsecond)),
		"the old leader stopped at %v, later than its last stored renew plus RenewDeadline (%v)", aTerm.end, lastLanded.Add(renewDeadline))
	require.True(t, aTerm.end.Before(lastLanded.Add(leaseDuration)),
		"the old leader stopped at %v, after its Lease could expire at %v", aTerm.end, lastLanded.Add(leaseDuration))
	require.True(t, bTerm.start.After(lastLanded.Add(leaseDuration)),
		"the standby led at %v, before the old Lease expired at %v", bTerm.start, lastLanded.Add(leaseDuration))
	require.True(t, bTerm.start.After(aTerm.end))
	require.False(t, errors.Is(errA, context.Canceled))
}
