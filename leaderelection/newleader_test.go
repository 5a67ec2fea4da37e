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

// OnNewLeader runs apart from the elector: a callback that takes longer
// than RenewDeadline neither delays the renews nor ends the term. On the
// fake API server, in a synctest bubble: the callback's sleep and the
// term's renew deadline are simulated time.
func TestASlowOnNewLeaderDelaysNoRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := inMemory(t, fakeapiserver.New())
		slow := 2 * renewDeadline
		leading := make(chan context.Context, 1)
		called := make(chan struct{})
		cfg, _ := config(t, mem.Config(), "kube-system", "slow-callback", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- ctx; <-ctx.Done() },
			OnStoppedLeading: func() {},
			OnNewLeader: func(string) {
				close(called)
				time.Sleep(slow)
			},
		})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		term := <-leading
		<-called
		select {
		case <-term.Done():
			t.Fatalf("the term ended while OnNewLeader slept: %v", context.Cause(term))
		case <-time.After(slow + renewDeadline):
		}
		cancel()
		require.NoError(t, <-done)
	})
}
