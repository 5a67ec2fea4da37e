package workqueue

import "time"

// Clock is where a [Queue] gets the time: for delayed keys, for the time
// it hands to its [RateLimiter], and for the Time of its trace events.
//
// The real clock (the default) is time.Now and time.AfterFunc. Tests and
// examples use a [FakeClock], whose time moves only when they say so, so
// that "this key is due in 5 s" is checked without waiting 5 s and without
// depending on the machine's speed.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to run once d has passed, and returns a
	// Timer that can cancel it. f must never run inside AfterFunc itself,
	// because the Queue calls AfterFunc while holding its lock and f takes
	// that lock: the real clock runs f in a goroutine of its own, a
	// FakeClock in the goroutine that calls Step.
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

// realClock is the default Clock: the time package itself.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
