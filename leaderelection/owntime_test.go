package leaderelection_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A Lease's renewTime was written by another machine's clock, so a
// standby never compares it with its own. A Lease left by a holder that
// died, stamped an hour ago or an hour ahead (a clock that runs ahead),
// is taken the same way: once it has not changed for LeaseDuration,
// counted on the standby's clock from when it first saw it; not at once
// for the stamp an hour old, not an hour later for the stamp ahead.
func TestAStandbyCountsLeaseDurationFromWhenItSawTheLeaseNotFromItsRenewTime(t *testing.T) {
	for name, skew := range map[string]time.Duration{"stamped an hour ago": -time.Hour, "stamped an hour ahead": time.Hour} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := inMemory(t, fakeapiserver.New())
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				seconds := int32(leaseDuration / time.Second)
				stamp := metav1.NewMicroTime(time.Now().Add(skew))
				dead := "dead"
				lease := &coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "stamped"},
					Spec: coordinationv1.LeaseSpec{HolderIdentity: &dead, LeaseDurationSeconds: &seconds,
						AcquireTime: &stamp, RenewTime: &stamp},
				}
				client := must(leaderelection.NewClient(mem.Config()))
				require.NoError(t, client.Post().Namespace("kube-system").Resource("leases").Body(lease).Do(ctx).Error())

				terms := make(chan span, 1)
				began := time.Now() // the standby's first look is now
				var wg sync.WaitGroup
				wg.Go(func() { _ = bubbleCandidate(t, mem, "stamped", "standby", terms).Run(ctx) })
				time.Sleep(leaseDuration + time.Minute)
				cancel()
				wg.Wait()

				got := collect(terms)
				require.Len(t, got, 1, "the standby led once")
				waited := got[0].start.Sub(began)
				t.Logf("renewTime %v off: the standby led %v after its first look", skew, waited)
				require.GreaterOrEqual(t, waited, leaseDuration, "it waited out LeaseDuration from its first sight")
				require.LessOrEqual(t, waited, leaseDuration+maxAcquireWait, "and no longer: the first attempt after it")
			})
		})
	}
}

// Run releases the Lease only after OnStartedLeading has returned: a
// leader whose work takes 2 s to stop once its context ends still holds
// the Lease all that time, and a standby leads only after the work has
// stopped. The release is written although Run's context has ended.
func TestRunReleasesTheLeaseOnlyAfterOnStartedLeadingHasReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		const stopping = 2 * time.Second // < LeaseDuration: no standby may take the Lease by expiry meanwhile
		leading := make(chan struct{})
		var returned time.Time // written before OnStartedLeading returns, read after Run has
		a := bubbleCandidate(t, mem, "slow", "a", nil, func(c *leaderelection.Config) {
			c.ReleaseOnCancel = true
			c.Callbacks.OnStartedLeading = func(ctx context.Context) {
				close(leading)
				<-ctx.Done()
				time.Sleep(stopping) // the work takes a while to stop
				returned = time.Now()
			}
		})
		ctxA, stopA := context.WithCancel(ctx)
		aDone := make(chan error, 1)
		go func() { aDone <- a.Run(ctxA) }()
		<-leading

		terms := make(chan span, 1)
		var wg sync.WaitGroup
		wg.Go(func() { _ = bubbleCandidate(t, mem, "slow", "b", terms).Run(ctx) })
		time.Sleep(time.Second) // b sees a hold the Lease

		stopA()
		time.Sleep(stopping / 2)
		holder := getLease(ctx, t, mem.Config(), "kube-system", "slow").Spec.HolderIdentity
		require.NotNil(t, holder, "not released while OnStartedLeading runs")
		require.Equal(t, "a", *holder)
		require.NoError(t, <-aDone, "a term ended by its context, released, is no error")
		require.Nil(t, getLease(ctx, t, mem.Config(), "kube-system", "slow").Spec.HolderIdentity, "released once it returned")

		time.Sleep(leaseDuration)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.Len(t, got, 1, "b led")
		require.False(t, got[0].start.Before(returned), "b led at %v, before a's work stopped at %v", got[0].start, returned)
	})
}

// A standby waits out the leaseDurationSeconds the Lease names, the
// holder's setting, not its own LeaseDuration (as client-go does): one
// configured with three times the holder's takes a dead holder's Lease
// after the holder's duration, so a longer LeaseDuration on the standby
// buys no margin against a live holder.
func TestAStandbyWaitsTheLeaseDurationTheLeaseNamesNotItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		seconds := int32(leaseDuration / time.Second)
		now := metav1.NewMicroTime(time.Now())
		dead := "dead"
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "named"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &dead, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now},
		}
		client := must(leaderelection.NewClient(mem.Config()))
		require.NoError(t, client.Post().Namespace("kube-system").Resource("leases").Body(lease).Do(ctx).Error())

		terms := make(chan span, 1)
		began := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = bubbleCandidate(t, mem, "named", "standby", terms, func(c *leaderelection.Config) {
				c.LeaseDuration = 3 * leaseDuration
			}).Run(ctx)
		})
		time.Sleep(3*leaseDuration + time.Minute)
		cancel()
		wg.Wait()

		got := collect(terms)
		require.Len(t, got, 1, "the standby led once")
		waited := got[0].start.Sub(began)
		require.GreaterOrEqual(t, waited, leaseDuration, "it waited out the Lease's duration")
		require.LessOrEqual(t, waited, leaseDuration+maxAcquireWait,
			"it waited %v, its own LeaseDuration (%v), not the %v the Lease names", waited, 3*leaseDuration, leaseDuration)
	})
}
