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
// at rate since the last change, from where it was then, so it never
// jumps: after a Skew window it runs true again, ahead or behind by what
// the window added, as a machine's clock does.
type rate struct {
	mu    sync.Mutex
	rate  float64   // guarded by mu; 0 is 1, true time
	since time.Time // guarded by mu; the bubble's time at the last change
	at    time.Time // guarded by mu; the slot's clock then
}

// now is the slot's clock.
func (r *rate) now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nowLocked()
}

func (r *rate) nowLocked() time.Time {
	if r.since.IsZero() {
		return time.Now()
	}
	return r.at.Add(time.Duration(float64(time.Since(r.since)) * r.factor()))
}

// set makes the clock run at rate from now on (1: true time).
func (r *rate) set(rate float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at, r.since, r.rate = r.nowLocked(), time.Now(), rate
}

// real is how long d of the slot's clock takes on the bubble's, at the
// rate of now (a timer set before a change of rate keeps its old pace).
func (r *rate) real(d time.Duration) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Duration(float64(d) / r.factor())
}

func (r *rate) factor() float64 {
	if r.rate == 0 {
		return 1
	}
	return r.rate
}
