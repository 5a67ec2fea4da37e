package workqueue

import (
	"sync"
	"time"
)

// FakeClock is a [Clock] whose time stands still until Step moves it. It
// makes everything time-driven in a [Queue] deterministic: delayed keys
// become due, and rate limiters see time pass, exactly when a test or an
// example says so, and never because the machine was slow.
//
// Functions scheduled with AfterFunc run during Step, on the goroutine
// that calls Step, in the order of their due times. So when Step returns,
// every key whose delay is over is already in the queue.
//
// A FakeClock is safe for concurrent use. The zero value is not usable;
// create one with [NewFakeClock].
type FakeClock struct {
	// mu guards every field below. It is never held while a scheduled
	// function runs, so those functions may call back into the clock.
	mu sync.Mutex
	// now is the clock's time; only Step changes it.
	now time.Time
	// timers are the scheduled functions that have neither run nor been
	// stopped, in no particular order.
	timers []*fakeTimer
	// seq numbers timers in the order they were scheduled, so that
	// functions due at the same time run in that order.
	seq uint64
}

// fakeTimer is one function scheduled on a FakeClock.
type fakeTimer struct {
	clock *FakeClock
	at    time.Time
	seq   uint64
	f     func()
}

// NewFakeClock returns a FakeClock that reads now until Step is called.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now}
}

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run during the first Step that moves the time
// to now+d or later. Even with d ≤ 0, f does not run before the next Step.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return t
}

// Stop unschedules the timer's function; it reports whether it did.
func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remove(t)
}

// remove deletes t from c.timers and reports whether it was there. The
// caller holds c.mu. Cost: O(number of timers).
func (c *FakeClock) remove(t *fakeTimer) bool {
	for i, other := range c.timers {
		if other == t {
			c.timers[i] = c.timers[len(c.timers)-1]
			c.timers = c.timers[:len(c.timers)-1]
			return true
		}
	}
	return false
}

// Step moves the clock forward by d, then runs every scheduled function
// whose time has come, earliest first (ties in the order they were
// scheduled), one at a time, on the calling goroutine. Now already returns
// the new time while they run. A function that schedules another one due
// by then also runs before Step returns. Step panics if d is negative:
// time does not go back.
func (c *FakeClock) Step(d time.Duration) {
	if d < 0 {
		panic("workqueue: FakeClock.Step with a negative duration")
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	for {
		next := c.nextDue()
		if next == nil {
			break
		}
		c.remove(next)
		c.mu.Unlock() // f may take a lock that is held while calling AfterFunc or Now
		next.f()
		c.mu.Lock()
	}
	c.mu.Unlock()
}

// nextDue returns the earliest timer due at or before now, or nil. The
// caller holds c.mu.
func (c *FakeClock) nextDue() *fakeTimer {
	var next *fakeTimer
	for _, t := range c.timers {
		if t.at.After(c.now) {
			continue
		}
		if next == nil || t.at.Before(next.at) || (t.at.Equal(next.at) && t.seq < next.seq) {
			next = t
		}
	}
	return next
}

// Timers returns how many scheduled functions have neither run nor been
// stopped. A Queue keeps at most one; after ShutDown, none.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
