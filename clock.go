package informer

import (
	"context"
	"time"

	"github.com/listwatch/informer/internal/nilcheck"
)

// Clock is where a stage that acts on time gets it: the workqueue for
// delayed keys and rate limits, the reflector for its resync ticks, the
// shared informer for each handler's resync schedule.
//
// The real clock (RealClock, every default) is time.Now and
// time.AfterFunc. Tests and examples pass a fake one, such as
// workqueue.FakeClock, whose time moves only when they say so: "this is
// due in 5 s" is then checked without waiting 5 s and without depending on
// the machine's speed.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to run once d has passed, and returns a
	// Timer that can cancel it. f must never run inside AfterFunc itself,
	// because callers may hold a lock that f takes: the real clock runs f
	// in a goroutine of its own, a fake clock in the goroutine that moves
	// its time.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer cancels a function scheduled with Clock.AfterFunc. *time.Timer
// satisfies it.
type Timer interface {
	// Stop prevents the function from running. It reports whether it did
	// so: false means the function has already run or started, or the
	// timer was already stopped.
	Stop() bool
}

// RealClock is the Clock of the time package itself.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// ClockOrReal returns c, or RealClock if c is nil: the default of every
// Clock option. A nil pointer held in c (a *FakeClock declared and never
// made) is nil too, as workqueue.New takes it, rather than a clock whose
// first Now panics inside whichever stage took the option
// (TestClockOrRealTakesANilPointerHeldInAClockAsNoClock).
func ClockOrReal(c Clock) Clock {
	if nilcheck.IsNil(c) {
		return RealClock{}
	}
	return c
}

// WithTimeout is context.WithTimeout measured on c, so that a fake clock
// in a test governs it too. Unlike context.WithTimeout it reports no
// Deadline: the clock's time need not be the wall clock's. When d has
// passed on c, the context ends as a timeout does: Err and Cause are
// context.DeadlineExceeded.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := ClockOrReal(c).AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return clockTimeout{ctx}, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// clockTimeout is WithTimeout's context: its Err says DeadlineExceeded
// when that is its cause, as a context.WithTimeout's would, so that
// errors.Is(err, context.DeadlineExceeded) holds for what it ends.
type clockTimeout struct{ context.Context }

func (c clockTimeout) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// Sleep waits d on c, or until ctx ends; it reports whether the whole
// wait passed.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	done := make(chan struct{})
	t := ClockOrReal(c).AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
