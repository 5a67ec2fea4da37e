package simulation

import (
	"sync"
	"time"
)

// maxRateSkew bounds how far a Skew fault's rate is from true time (1):
// 0.1, so two skewed clocks differ by at most 1.1/0.9 ≈ 1.22, inside the
// bound leader election and sharding document for exclusivity, no clock
// faster than another by more than LeaseDuration/RenewDeadline (4 s/3 s
// here, 1.33).
const maxRateSkew = 0.1

// rate is a replica slot's clock rate: how its clock (Now, and the
// delays of its timers) maps onto the bubble's one time. Its clock runs
// at a rate from each change on, from where it was then, so it never
// jumps: after a Skew window it runs true again, ahead or behind by what
// the window added, as a machine's clock does. Every change is kept, so
// a time on the slot's clock maps back to the bubble's exactly.
type rate struct {
	mu      sync.Mutex
	changes []rateChange // guarded by mu; in order; none: true time
}

// rateChange is the rate from since (the bubble's time) on, when the
// slot's clock read at.
type rateChange struct {
	since, at time.Time
	rate      float64
}

// now is the slot's clock.
func (r *rate) now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nowLocked()
}

func (r *rate) nowLocked() time.Time {
	if len(r.changes) == 0 {
		return time.Now()
	}
	c := r.changes[len(r.changes)-1]
	return c.at.Add(time.Duration(float64(time.Since(c.since)) * c.rate))
}

// set makes the clock run at rate from now on (1: true time).
func (r *rate) set(rate float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, rateChange{since: time.Now(), at: r.nowLocked(), rate: rate})
}

// real is how long d of the slot's clock takes on the bubble's, at the
// rate of now (a timer set before a change of rate keeps its old pace).
func (r *rate) real(d time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.changes) == 0 {
		return d
	}
	return time.Duration(float64(d) / r.changes[len(r.changes)-1].rate)
}

// bubbleTime is the bubble's time at which the slot's clock read t (or
// will, at the rate of now): the inverse of now, across every change.
func (r *rate) bubbleTime(t time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.changes) - 1; i >= 0; i-- {
		if c := r.changes[i]; !t.Before(c.at) {
			return c.since.Add(time.Duration(float64(t.Sub(c.at)) / c.rate))
		}
	}
	return t // before the first change the slot's clock was the bubble's
}
