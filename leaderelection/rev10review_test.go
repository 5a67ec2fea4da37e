package leaderelection_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// steadyClock is the bubble's clock, except that every wait other than
// an attempt's timeout lasts period exactly (the least the jitter
// gives, so the looks fall at known times) until armed; then the next
// such wait lasts pause (Run's goroutine not scheduled for that long),
// and every wait after it is the bubble's own.
type steadyClock struct {
	attempt, period, pause time.Duration
	armed, over            atomic.Bool
	paused                 chan struct{} // closed when the paused wait begins
}

func (c *steadyClock) Now() time.Time { return time.Now() }

func (c *steadyClock) AfterFunc(d time.Duration, f func()) informer.Timer {
	if d != c.attempt && !c.over.Load() {
		d = c.period
		if c.armed.CompareAndSwap(true, false) {
			d = c.pause
			c.over.Store(true)
			close(c.paused)
		}
	}
	return time.AfterFunc(d, f)
}

// 1b4c407's lookSpacing, (1+JitterFactor)·RetryPeriod + 2·AttemptTimeout,
// is not "the most two looks of a running candidate are apart": a
// candidate's looks (each sent as its attempt starts, a GET first) are
// one attempt and one jittered wait apart, AttemptTimeout +
// 2.2·RetryPeriod at most, and a leader's (a fast-path PUT, then the
// GET) one attempt, one RetryPeriod and one more attempt,
// 2·AttemptTimeout + RetryPeriod. The sum of the two slacks is counted
// as spacing: here (RetryPeriod 1 s, AttemptTimeout 1.2 s) no running
// candidate's or leader's looks are more than 3.4 s apart, but looks up
// to 4.6 s apart keep the sight of the absence. b sees a's Lease
// deleted, looks twice more, and is paused 4 s between two looks (more
// than any running candidate waits between two); meanwhile a puts the
// Lease back, renews it and is cut off as someone deletes it again. b
// wakes, keeps its 6 s old sight (4 s ≤ lookSpacing), finds the absence
// waited out and creates the Lease at once, while a's term runs until
// its last renew plus RenewDeadline (4.5 s). The same gap, on this
// package's test timings (AttemptTimeout RenewDeadline/2), makes
// lookSpacing 4.1 s, more than LeaseDuration (4 s): one unseen pause can
// hold a whole absence wait. Passing means the terms do not overlap.
func TestAStandbyPausedLongerThanItsLooksAreSpacedWaitsOutADeleteItSawBeforeThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "spaced") }
		const bAttempt, bPeriod = 1200 * time.Millisecond, time.Second
		clock := &steadyClock{attempt: bAttempt, period: bPeriod, pause: 4 * time.Second, paused: make(chan struct{})}

		// t=0: a leads, and renews every 500 ms; its term outlasts the
		// first delete until b's pause has begun.
		wg.Go(func() {
			_ = bubbleCandidate(t, sd.a, "spaced", "a", terms, func(c *leaderelection.Config) {
				c.LeaseDuration, c.RenewDeadline = 5*time.Second, 4500*time.Millisecond
			}).Run(ctx)
		})
		time.Sleep(250 * time.Millisecond)
		// t=0.25: b looks at 0.25, 1.25, 2.25, 3.25, 4.25, then 8.25.
		b := bubbleCandidate(t, sd.b, "spaced", "b", terms, func(c *leaderelection.Config) {
			c.Clock, c.RetryPeriod, c.AttemptTimeout = clock, bPeriod, bAttempt
		})
		wg.Go(func() { _ = b.Run(ctx) })
		time.Sleep(1850 * time.Millisecond)

		// t=2.1: a, last renewed at 2.0, cannot put the Lease back yet.
		sd.aFaulty.Store(true)
		del() // b sees it absent at 2.25, 3.25, 4.25
		time.Sleep(1400 * time.Millisecond)
		clock.armed.Store(true) // t=3.5
		<-clock.paused          // t=4.25: b is not scheduled until 8.25
		time.Sleep(50 * time.Millisecond)
		sd.aFaulty.Store(false) // t=4.3: a puts the Lease back at 4.5, renews on
		time.Sleep(1800 * time.Millisecond)
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "spaced").Spec.HolderIdentity, "a renews")
		sd.aFaulty.Store(true) // t=6.1: a's term ends at 6.0 + 4.5
		del()

		time.Sleep(20 * time.Second) // b wakes at 8.25 and looks
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}
