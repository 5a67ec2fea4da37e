package leaderelection_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
)

// OnNewLeader runs apart from the elector: a callback that takes longer
// than RenewDeadline neither delays the renews nor ends the term.
func TestASlowOnNewLeaderDelaysNoRenew(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	slow := 2 * renewDeadline
	leading := make(chan context.Context, 1)
	called := make(chan struct{})
	cfg, _ := config(t, cp.Config(), ns, "slow-callback", "leader", leaderelection.Callbacks{
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
}
