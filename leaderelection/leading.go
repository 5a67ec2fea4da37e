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

// leadingContext is the context OnStartedLeading receives. A watchdog
// timer cancels it at the last successful renew plus the renew deadline;
// each successful renew re-arms the timer later. So leadership ends on
// time even if every other goroutine of the process is stalled: nothing
// but a successful renew, reported by the elector, can move the end.
//
// Deadline reports that moving end. A context derived from this one
// copies the deadline as it is at derivation, which is safe: the true end
// only ever moves later.
type leadingContext struct {
	context.Context                         // from WithCancelCause(parent): Done, Err, Value
	cancel          context.CancelCauseFunc // ends the term, with a cause

	clock         informer.Clock
	renewDeadline time.Duration
	lease         string // namespace/name, for the cause's message

	mu       sync.Mutex
	deadline time.Time      // guarded by mu; last successful renew + renewDeadline
	timer    informer.Timer // guarded by mu; fires at deadline
	armed    uint64         // guarded by mu; counts arms, so a stale timer does nothing
}

// newLeadingContext starts a term whose first successful write was sent
// at renewedAt.
func newLeadingContext(parent context.Context, clock informer.Clock, renewDeadline time.Duration, lease string, renewedAt time.Time) *leadingContext {
	ctx, cancel := context.WithCancelCause(parent)
	c := &leadingContext{Context: ctx, cancel: cancel, clock: clock, renewDeadline: renewDeadline, lease: lease}
	c.mu.Lock()
	c.arm(renewedAt)
	c.mu.Unlock()
	return c
}

// Deadline is the last successful renew plus the renew deadline.
func (c *leadingContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, true
}

// renewed moves the end to renewedAt plus the renew deadline, where
// renewedAt is when the successful renew was sent (before it landed, so
// the term never outlives what the Lease says). After the term ended it
// does nothing: a late success cannot revive it.
func (c *leadingContext) renewed(renewedAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err() != nil {
		return
	}
	c.timer.Stop()
	c.arm(renewedAt)
}

// arm sets the deadline and its timer. c.mu must be held.
func (c *leadingContext) arm(renewedAt time.Time) {
	c.deadline = renewedAt.Add(c.renewDeadline)
	c.armed++
	armed := c.armed
	c.timer = c.clock.AfterFunc(c.deadline.Sub(c.clock.Now()), func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.armed == armed { // not re-armed since: the deadline passed
			c.cancel(fmt.Errorf("%w: lease %s not renewed within the renew deadline (%v)", ErrLost, c.lease, c.renewDeadline))
		}
	})
}

// end ends the term now with cause, and stops the watchdog.
func (c *leadingContext) end(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer.Stop()
	c.cancel(cause)
}
