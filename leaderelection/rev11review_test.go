package leaderelection_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// As TestAStandbyPausedLongerThanItsLooksAreSpacedWaitsOutADeleteItSawBeforeThePause,
// with an AttemptTimeout above 1.2·RetryPeriod (as the defaults have it:
// 5 s against 2 s). b's looks as a standby are at most AttemptTimeout +
// 2.2·RetryPeriod apart, 5.2 s here (RetryPeriod 1 s, AttemptTimeout
// 3 s), but lookSpacing is the leader's 2·AttemptTimeout + RetryPeriod,
// 7 s. b sees a's Lease deleted at 2.25, looks twice more, and is
// paused 6.5 s between two looks, longer than a standby's looks are ever
// apart, as doc.go says counts as failed; meanwhile a puts the Lease
// back, renews it and is cut off as someone deletes it again. b wakes at
// 10.75 with its 8.5 s old sight of the absence, waited out (b's
// LeaseDuration 5 s, a's Lease's 8 s), and creates the Lease while a
// leads until its last renew (6.0) plus 7.5 s.
func TestAStandbyPausedLongerThanAStandbysLooksAreSpacedButWithinALeadersWaitsOutADeleteItSawBeforeThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "spaced2") }
		const bAttempt, bPeriod = 3 * time.Second, time.Second
		clock := &steadyClock{attempt: bAttempt, period: bPeriod, pause: 6500 * time.Millisecond, paused: make(chan struct{})}

		// t=0: a leads, renews every 500 ms; its term outlasts every gap here.
		wg.Go(func() {
			_ = bubbleCandidate(t, sd.a, "spaced2", "a", terms, func(c *leaderelection.Config) {
				c.LeaseDuration, c.RenewDeadline = 8*time.Second, 7500*time.Millisecond
			}).Run(ctx)
		})
		time.Sleep(250 * time.Millisecond)
		// t=0.25: b looks at 0.25, 1.25, 2.25, 3.25, 4.25, then 10.75.
		b := bubbleCandidate(t, sd.b, "spaced2", "b", terms, func(c *leaderelection.Config) {
			c.Clock, c.RetryPeriod, c.AttemptTimeout = clock, bPeriod, bAttempt
			c.LeaseDuration, c.RenewDeadline = 5*time.Second, 3*time.Second
		})
		wg.Go(func() { _ = b.Run(ctx) })
		time.Sleep(1850 * time.Millisecond)

		// t=2.1: a, last renewed at 2.0, cannot put the Lease back yet.
		sd.aFaulty.Store(true)
		del() // b sees it absent at 2.25, 3.25, 4.25
		time.Sleep(1400 * time.Millisecond)
		clock.armed.Store(true) // t=3.5
		<-clock.paused          // t=4.25: b is not scheduled until 10.75
		time.Sleep(50 * time.Millisecond)
		sd.aFaulty.Store(false) // t=4.3: a puts the Lease back at 4.5, renews on
		time.Sleep(1800 * time.Millisecond)
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "spaced2").Spec.HolderIdentity, "a renews")
		sd.aFaulty.Store(true) // t=6.1: a's term ends at 6.0 + 7.5
		del()

		time.Sleep(30 * time.Second) // b wakes at 10.75 and looks
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}
