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

// What makes an old first sight of the Lease's absence bound nothing is
// time without a look, inside one Run or across two (looked,
// lookSpacing): a standby that sees the Lease deleted, then is not
// scheduled for 30 s between two looks of the same Run, wakes with its
// sight 30 s old. Meanwhile the leader put the Lease back, renewed it, and was
// cut off as someone deleted it again; the standby's next look finds it
// absent. The leader's term runs until its last renew plus
// RenewDeadline (6 s here; the leader's Lease names 8 s, which b waits
// for too). The gap counts as a failed look, the wait starts afresh, and
// the terms do not overlap. (Before, b took its old sight as waited out
// and created the Lease at once.)
func TestAStandbyPausedBetweenTwoLooksWaitsOutADeleteItSawBeforeThePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "paused") }
		clock := &steadyClock{attempt: attemptTimeout, pause: 30 * time.Second, paused: make(chan struct{})}

		// a's renew deadline is long enough that its term outlasts the
		// moments before b's pause begins, whatever the jitter.
		wg.Go(func() {
			_ = bubbleCandidate(t, sd.a, "paused", "a", terms, func(c *leaderelection.Config) {
				c.LeaseDuration, c.RenewDeadline = 8*time.Second, 6*time.Second
			}).Run(ctx)
		})
		time.Sleep(time.Second) // a leads
		b := bubbleCandidate(t, sd.b, "paused", "b", terms, func(c *leaderelection.Config) {
			c.Clock, c.AttemptTimeout = clock, attemptTimeout // the pause is not an attempt's timeout
		})
		wg.Go(func() { _ = b.Run(ctx) })
		time.Sleep(time.Second) // b sees it held

		sd.aFaulty.Store(true) // a cannot put the Lease back yet
		del()
		time.Sleep(1300 * time.Millisecond) // b sees it absent
		clock.armed.Store(true)
		<-clock.paused // b is not scheduled for 30 s from now
		sd.aFaulty.Store(false)
		time.Sleep(28500 * time.Millisecond) // a puts the Lease back and renews
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "paused").Spec.HolderIdentity, "a renews")
		sd.aFaulty.Store(true) // a's term ends 6 s after its last renew
		del()

		time.Sleep(20 * time.Second) // b wakes and looks
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}

// A standby whose Run is started again more often than LeaseDuration,
// at once each time, every look working, keeps its sight of the Lease's
// absence across Runs (no more time passes between its last look and
// its next than between two looks of one Run): here its caller stands
// in 3 s turns, the leader is dead and its Lease deleted, and b leads
// about LeaseDuration after it first saw it absent. (7b170fe's reset at
// every Run's start kept it from ever leading.)
func TestAStandbyRunAgainAtOnceTakesALeaseDeletedUnderADeadLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sd := newSides(t, fakeapiserver.Fault{}, fakeapiserver.Fault{})
		terms := make(chan span, 64)
		ctx, cancel := context.WithCancel(t.Context())
		ctxA, killA := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		bLeads := make(chan time.Time, 1)

		wg.Go(func() { _ = bubbleCandidate(t, sd.a, "turns", "a", terms).Run(ctxA) })
		time.Sleep(time.Second) // a leads
		b := bubbleCandidate(t, sd.b, "turns", "b", terms, func(c *leaderelection.Config) {
			lead := c.Callbacks.OnStartedLeading
			c.Callbacks.OnStartedLeading = func(ctx context.Context) {
				select {
				case bLeads <- time.Now():
				default:
				}
				lead(ctx)
			}
		})
		wg.Go(func() {
			for ctx.Err() == nil { // stand in turns of 3 s, again at once
				turn, end := context.WithTimeout(ctx, 3*time.Second)
				_ = b.Run(turn)
				end()
			}
		})
		time.Sleep(2 * time.Second) // b sees a's Lease

		killA() // a dies without releasing
		time.Sleep(100 * time.Millisecond)
		deleteLease(ctx, t, sd.admin, "turns")
		deleted := time.Now()
		select {
		case at := <-bLeads:
			t.Logf("b leads %v after the delete", at.Sub(deleted))
		case <-time.After(60 * time.Second):
			t.Fatalf("b, started again every 3 s and every look working, did not lead within 60 s of the delete")
		}
	})
}

// A standby sees the Lease held by a, then deleted (its first sight of
// the absence starts its wait), and its Run's ctx ends (a caller that
// stops standing for a while: "Run again to stand again"). a puts the
// Lease back and renews on for minutes; then someone deletes it again
// and a is cut off: a's term runs until its last renew plus
// RenewDeadline. The standby Runs again, on the same Elector, and its
// first look finds the Lease absent: that look is further from its last
// than looks are ever spaced, so its old sight of the absence counts for
// nothing and it waits afresh; the terms do not overlap. (Before, it
// took the old sight as waited out, created the Lease at once and led
// beside a.)
func TestAStandbyThatRunsAgainAfterAGapWaitsOutADeleteItSawBeforeTheGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "gap") }

		wg.Go(func() { _ = bubbleCandidate(t, sd.a, "gap", "a", terms).Run(ctx) })
		time.Sleep(time.Second) // a leads
		b := bubbleCandidate(t, sd.b, "gap", "b", terms)
		bctx, bstop := context.WithCancel(ctx)
		bdone := make(chan struct{})
		go func() { defer close(bdone); _ = b.Run(bctx) }()
		time.Sleep(time.Second) // b sees it held

		sd.aFaulty.Store(true) // a cannot put the Lease back yet
		del()
		time.Sleep(1300 * time.Millisecond) // b sees it absent
		bstop()                             // b stops standing
		<-bdone
		sd.aFaulty.Store(false) // a puts it back and renews on
		time.Sleep(2 * time.Minute)
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "gap").Spec.HolderIdentity, "a renews")
		sd.aFaulty.Store(true) // a's term ends 3 s after its last renew
		del()

		wg.Go(func() { _ = b.Run(ctx) }) // b stands again
		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}

// steadyClock is the bubble's clock, except that every wait other than
// an attempt's timeout lasts period exactly, if period is set (the least
// the jitter gives, so the looks fall at known times), until armed; then
// the next such wait lasts pause: Run's goroutine not scheduled for that
// long (a stopped process, a frozen VM, a throttled container), its
// clock running on. Every wait after it is the bubble's own.
type steadyClock struct {
	attempt, period, pause time.Duration
	armed, over            atomic.Bool
	paused                 chan struct{} // closed when the paused wait begins
}

func (c *steadyClock) Now() time.Time { return time.Now() }

func (c *steadyClock) AfterFunc(d time.Duration, f func()) informer.Timer {
	if d != c.attempt && !c.over.Load() {
		if c.period > 0 {
			d = c.period
		}
		if c.armed.CompareAndSwap(true, false) {
			d = c.pause
			c.over.Store(true)
			close(c.paused)
		}
	}
	return time.AfterFunc(d, f)
}

// A standby's looks (each sent as its attempt starts, a GET first) are
// at most one attempt and one jittered wait apart, AttemptTimeout +
// 2.2·RetryPeriod, and a leader's (a fast-path PUT, then the GET) one
// attempt, one RetryPeriod and one more attempt's write, 2·AttemptTimeout
// + RetryPeriod: here (RetryPeriod 1 s, AttemptTimeout 1.2 s) no more
// than 3.4 s. b sees a's Lease deleted, looks twice more, and is paused
// 4 s between two looks; meanwhile a puts the Lease back, renews it and
// is cut off as someone deletes it again. b wakes, its look 4 s after
// the last counts as failed, and it waits afresh: the terms do not
// overlap. (1b4c407's bound, the sum of both, 4.6 s here, kept b's 6 s
// old sight, and b led beside a.)
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

// As TestAStandbyPausedLongerThanItsLooksAreSpacedWaitsOutADeleteItSawBeforeThePause,
// with an AttemptTimeout above 1.2·RetryPeriod (as the defaults have it:
// 5 s against 2 s). b's looks as a standby are at most AttemptTimeout +
// 2.2·RetryPeriod apart, 5.2 s here (RetryPeriod 1 s, AttemptTimeout
// 3 s), a leader's 2·AttemptTimeout + RetryPeriod, 7 s. b sees a's Lease
// deleted at 2.25, looks twice more, and is paused 6.5 s between two
// looks, longer than a standby's looks are ever apart: that look counts
// as failed and b waits afresh, while a puts the Lease back, renews it
// and is cut off as someone deletes it again; the terms do not overlap.
// (8c761c4's bound, the larger of the two, kept b's 8.5 s old sight, and
// b led beside a.)
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
