package leaderelection_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// TestAnOnStartedLeadingThatReturnsAtOnceDoesNotEndTheTerm: as in
// client-go, the term is not OnStartedLeading's return but the Lease: a
// callback that starts its work elsewhere and returns leaves the
// candidate leading, renewing and healthy, until Run's ctx ends. (The
// callback's doc says so; sharding.Member ends its term when its Run
// returns, TestAMemberWhoseRunReturnsBeforeItsTermEndsLetsItsLeaseGo.)
func TestAnOnStartedLeadingThatReturnsAtOnceDoesNotEndTheTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		started := make(chan struct{}, 1)
		cfg, _ := config(t, mem.Config(), "default", "early", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(context.Context) { started <- struct{}{} },
			OnStoppedLeading: func() {},
		})
		el := must(leaderelection.New(cfg))
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- el.Run(ctx) }()
		<-started
		first := getLease(t.Context(), t, mem.Config(), "default", "early").Spec.RenewTime.Time

		time.Sleep(3 * leaseDuration)
		lease := getLease(t.Context(), t, mem.Config(), "default", "early")
		require.Equal(t, "leader", *lease.Spec.HolderIdentity)
		require.True(t, lease.Spec.RenewTime.After(first), "the leader stopped renewing once its callback returned")
		require.NoError(t, el.Healthy(time.Now()))
		select {
		case err := <-done:
			t.Fatalf("Run returned (%v) while its ctx went on", err)
		default:
		}
		stop()
		require.NoError(t, <-done)
	})
}
