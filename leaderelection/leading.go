package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	informer "github.com/listwatch/informer"
)

// ErrLost is the cause (context.Cause) of a leading context that ended
// because leadership was lost: the renew deadline passed, or another
// candidate holds the Lease. Run's error wraps it too.
var ErrLost = errors.New("leadership lost")

// ErrNotOwnLease is what Run of a Config.OwnLeaseOnly candidate returns,
// wrapped, when, before it leads, it finds its Lease held by another
// identity or by none, or deleted after it saw it or sent a create that
// may have landed (see Config.OwnLeaseOnly).
var ErrNotOwnLease = errors.New("the Lease is not this identity's")

// Term is what a leader knows of its current term. OnStartedLeading's
// context carries it: TermOf(ctx).
type Term struct {
	// Lease is the Lease's namespace/name.
	Lease string
	// Identity is this candidate's, the Lease's holder during the term.
	Identity string
	// Fence is the term's fencing number: the resourceVersion, as an
	// integer, of the write that began the term (the create or update
	// that made this candidate the holder). A leader that writes it with
	// its changes (a field, an annotation) lets a reader that keeps the
	// greatest fence it accepted refuse a deposed leader's late write:
	// fencing, which the Lease alone cannot give (see "What it does not
	// guarantee").
	//
	// Guarantee: a term's fence is greater than that of every term that
	// began before it, on this Lease (deleted and created again by
	// anyone, remembering anything or nothing) or on any other Lease of
	// the cluster. So such a reader never refuses the current leader, but
	// in one order: a Lease deleted under its leader, created by a
	// candidate that never saw it, whose term ends, and deleted again
	// before the old leader's next renew leaves no write to show that
	// another term came between; the old leader puts it back and goes on
	// with its fence, below that term's
	// (TestALeaderWhoseLeaseIsDeletedAgainAfterAnotherTermGoesOnWithItsLowerFence).
	// Assumed: the API server's resourceVersions of Leases are integers
	// that grow with every write (promised since Kubernetes 1.35,
	// KEP-5504; etcd's revision, in kube-apiserver), and etcd's history
	// is never rewound (a restore from a backup without --bump-revision
	// rewinds it). Fence is 0, no fence, if the resourceVersion is not
	// such an integer.
	//
	// It is not the Lease's leaseTransitions: that count lives in the
	// Lease and starts again at 0 when the Lease is created again.
	// Proved by TestAFenceGrowsAcrossADeletedLeaseWhoeverCreatesItAgain,
	// and for two Leases by sharding's
	// TestAMemberThatJoinsLaterHoldsTheGreaterFence.
	Fence uint64

	ctx *leadingContext
}

// End is when the term ends unless a renew succeeds first: the last
// successful renew plus RenewDeadline. It moves later with every renew,
// which is why the leading context's Deadline does not report it: a
// context.WithTimeout derived from a context whose deadline moves would
// arm no timer of its own whenever its timeout lies past that deadline.
// The zero Term, which TermOf returns outside every term, ends at the
// zero time: long past.
func (t Term) End() time.Time {
	if t.ctx == nil {
		return time.Time{}
	}
	t.ctx.mu.Lock()
	defer t.ctx.mu.Unlock()
	return t.ctx.end
}

// termKey is the context key of a leading context's Term.
type termKey struct{}

// TermOf returns the term of a leading context, or of any context derived
// from one; the zero Term and false for a context outside every term.
func TermOf(ctx context.Context) (Term, bool) {
	t, ok := ctx.Value(termKey{}).(Term)
	return t, ok
}

// leadingContext is the context OnStartedLeading receives. A watchdog
// timer cancels it at the last successful renew plus the renew deadline;
// each successful renew re-arms the timer later. So leadership ends on
// time even if every other goroutine of the process is stalled: nothing
// but a successful renew, reported by the elector, can move the end.
//
// Its Deadline is its parent's: the moving end is Term.End, never a
// deadline (see Term.End for why).
type leadingContext struct {
	context.Context                         // from WithCancelCause(parent): Deadline, Done, Err
	cancel          context.CancelCauseFunc // ends the term, with a cause
	term            Term

	clock         informer.Clock
	renewDeadline time.Duration

	mu    sync.Mutex
	lost  error          // guarded by mu; the cause this term ended with, when it ended itself (not by its parent)
	end   time.Time      // guarded by mu; last successful renew + renewDeadline
	timer informer.Timer // guarded by mu; fires at end
	armed uint64         // guarded by mu; counts arms, so a stale timer does nothing
}

// newLeadingContext starts a term whose first successful write was sent
// at renewedAt.
func newLeadingContext(parent context.Context, clock informer.Clock, renewDeadline time.Duration, term Term, renewedAt time.Time) *leadingContext {
	ctx, cancel := context.WithCancelCause(parent)
	c := &leadingContext{Context: ctx, cancel: cancel, term: term, clock: clock, renewDeadline: renewDeadline}
	c.term.ctx = c
	c.mu.Lock()
	c.arm(renewedAt)
	c.mu.Unlock()
	return c
}

// Value answers TermOf; every other key is the parent's.
func (c *leadingContext) Value(key any) any {
	if key == (termKey{}) {
		return c.term
	}
	return c.Context.Value(key)
}

// renewed moves the end to renewedAt plus the renew deadline, where
// renewedAt is when the successful renew was sent (before it landed, so
// the term never outlives what the Lease says). After the term ended it
// does nothing: a late success cannot revive it. A renew sent at or after
// the end ends the term now: its deadline had passed, though the
// watchdog's timer had not run yet (after a pause, or at the same instant)
// (TestARenewSentAfterTheDeadlineEndsTheTermInsteadOfExtendingIt).
func (c *leadingContext) renewed(renewedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err() != nil {
		return
	}
	c.timer.Stop()
	if !renewedAt.Before(c.end) {
		c.endWith(c.deadlinePassed())
		return
	}
	c.arm(renewedAt)
}

// deadlinePassed is the cause of a term not renewed within its deadline.
func (c *leadingContext) deadlinePassed() error {
	return fmt.Errorf("%w: lease %s not renewed within the renew deadline (%v)", ErrLost, c.term.Lease, c.renewDeadline)
}

// arm sets the end and its timer. c.mu must be held.
func (c *leadingContext) arm(renewedAt time.Time) {
	c.end = renewedAt.Add(c.renewDeadline)
	c.armed++
	armed := c.armed
	c.timer = c.clock.AfterFunc(c.end.Sub(c.clock.Now()), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.armed == armed { // not re-armed since: the deadline passed
			c.endWith(c.deadlinePassed())
		}
	})
}

// stop ends the term now with cause, and stops the watchdog.
func (c *leadingContext) stop(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer.Stop()
	c.endWith(cause)
}

// endWith ends the term with cause, and records it as the term's own unless
// the context had ended already: a context inherits its parent's cause,
// so a Run inside another term would otherwise take that term's ErrLost
// for its own (TestAnInnerRunWhoseContextEndsWithAnOuterTermReturnsNil).
// c.mu must be held.
func (c *leadingContext) endWith(cause error) {
	if c.Err() == nil {
		c.lost = cause
	}
	c.cancel(cause)
}

// ownCause is the cause the term ended itself with (the watchdog, or
// stop before its parent ended), nil when its parent ended it.
func (c *leadingContext) ownCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}
