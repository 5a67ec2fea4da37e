package leaderelection_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/workqueue"
)

// A nil pointer held in Config.Clock (a *FakeClock declared and never
// made) is no clock, as a nil Clock is: the default, the real clock, as
// workqueue.New takes it. It was kept, and Run panicked with a nil
// dereference at its first look at the time, from inside the elector.
func TestANilPointerHeldInConfigClockIsTheRealClockNotAPanic(t *testing.T) {
	var clock *workqueue.FakeClock
	el, err := leaderelection.New(leaderelection.Config{
		Client:    must(leaderelection.NewClient(&rest.Config{Host: "https://127.0.0.1:1"})),
		Namespace: "ns", Name: "lease",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
		Clock:     clock,
		Callbacks: leaderelection.Callbacks{OnStartedLeading: func(context.Context) {}, OnStoppedLeading: func() {}},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Run makes one attempt, which fails at once, and returns
	require.NotPanics(t, func() {
		require.ErrorIs(t, el.Run(ctx), context.Canceled)
	})
}
