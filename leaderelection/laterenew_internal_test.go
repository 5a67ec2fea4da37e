package leaderelection

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
)

// heldClock is a clock whose timers never fire: the moment after a
// pause (SIGSTOP, a VM frozen) when the renew loop runs before the
// watchdog's timer, whose deadline has passed.
type heldClock struct{ now time.Time }

func (c *heldClock) Now() time.Time                                 { return c.now }
func (c *heldClock) AfterFunc(time.Duration, func()) informer.Timer { return stoppedTimer{} }

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return true }

// A renew sent after the term's deadline cannot extend the term: the
// term ended at its deadline, whether or not the watchdog's timer has
// run yet. Re-armed from the late renew instead, the term would go on
// past the deadline the docs promise, with a cache and work from
// before the pause (and a member, its objects moved meanwhile, would
// reconcile them as if still theirs). Found by the members hunt, by
// reading.
func TestARenewSentAfterTheDeadlineEndsTheTermInsteadOfExtendingIt(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &heldClock{now: start}
	term := newLeadingContext(context.Background(), clock, 3*time.Second, Term{Lease: "default/web"}, start)
	clock.now = start.Add(10 * time.Second) // paused past the deadline; the timer has not run
	term.renewed(start.Add(10 * time.Second))
	require.Error(t, term.Err(), "a renew sent 7 s after the deadline extended the term")
	require.True(t, errors.Is(context.Cause(term), ErrLost))
	require.ErrorIs(t, term.ownCause(), ErrLost)
}

// A renew sent before the deadline, whose success is known only after
// it (an answer that came late), extends the term as any renew does:
// the Lease was renewed before the term ran out.
func TestARenewSentBeforeTheDeadlineAndAnsweredAfterItExtendsTheTerm(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &heldClock{now: start}
	term := newLeadingContext(context.Background(), clock, 3*time.Second, Term{Lease: "default/web"}, start)
	clock.now = start.Add(4 * time.Second)
	term.renewed(start.Add(2 * time.Second))
	require.NoError(t, term.Err())
	require.Equal(t, start.Add(5*time.Second), term.end)
}
