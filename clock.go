package informer

import "time"

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
// Clock option.
func ClockOrReal(c Clock) Clock {
	if c == nil {
		return RealClock{}
	}
	return c
}
