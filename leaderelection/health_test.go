package leaderelection_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// On a fake clock that never moves by itself, a leader's context has
// the deadline acquisition + RenewDeadline; Healthy turns false exactly
// past LeaseDuration + HealthTolerance without a renew; and when the
// clock passes the deadline with no renew, the watchdog ends the term
// with ErrLost. Afterwards no goroutine of the elector is left.
func TestTheWatchdogEndsATermAtItsDeadlineAndHealthyJudgesTheLastRenew(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"))

	clock := workqueue.NewFakeClock(time.Now())
	acquired := clock.Now() // the clock stands still until Step
	leading := make(chan context.Context, 1)
	// Once leading, every write of the Lease is refused, so no renew can
	// succeed: the Step below fires the renew's wait before the watchdog,
	// and a renew that landed in between (the stepping goroutine held up
	// for one round trip) would move the deadline past the Step.
	var refuseWrites atomic.Bool
	rc := cp.Config()
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if refuseWrites.Load() && req.Method != http.MethodGet {
				return nil, errors.New("the test refuses every write of the Lease once leading")
			}
			return rt.RoundTrip(req)
		})
	}
	cfg, _ := config(t, rc, ns, "watchdog", "watched", leaderelection.Callbacks{
		OnStartedLeading: func(ctx context.Context) { leading <- ctx; <-ctx.Done() },
		OnStoppedLeading: func() {},
	})
	cfg.Clock = clock
	cfg.HealthTolerance = time.Second
	el := must(leaderelection.New(cfg))
	require.NoError(t, el.Healthy(acquired.Add(time.Hour)), "a candidate that is not leading is healthy")

	done := make(chan error, 1)
	go func() { done <- el.Run(context.Background()) }()
	ctx := <-leading
	refuseWrites.Store(true)
	term, ok := leaderelection.TermOf(ctx)
	require.True(t, ok)
	require.Equal(t, acquired.Add(renewDeadline), term.End())

	limit := leaseDuration + cfg.HealthTolerance
	require.NoError(t, el.Healthy(acquired.Add(limit)))
	require.Error(t, el.Healthy(acquired.Add(limit+time.Nanosecond)))

	clock.Step(renewDeadline) // the first renew is due at RetryPeriod, and fails
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), leaderelection.ErrLost)
	require.Contains(t, context.Cause(ctx).Error(), "renew deadline")
	require.ErrorIs(t, <-done, leaderelection.ErrLost)
	require.NoError(t, el.Healthy(acquired.Add(time.Hour)), "after its term, a candidate is healthy")
}
