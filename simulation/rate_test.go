package simulation

import (
	"testing"
	"testing/synctest"
	"time"
)

// A time read on a skewed slot's clock maps back to the bubble's time
// exactly, whatever changes of rate fell since: a term's renew deadline
// is recorded on the history's clock seconds after it passed, and a
// window may begin or end in between. (The first version converted the
// whole gap at the rate of the moment of recording: off by 10% of the
// gap across a change, found by review.)
func TestATimeOnASkewedClockMapsBackToTheBubblesExactly(t *testing.T) {
	for _, tc := range []struct {
		name         string
		before, then float64
	}{{"a window ends in between", 1.1, 1}, {"a window begins in between", 1, 1.1}, {"no window", 1, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var r rate
				r.set(tc.before)
				time.Sleep(10 * time.Second)
				trueDeadline, deadline := time.Now(), r.now()
				time.Sleep(2 * time.Second)
				r.set(tc.then)
				time.Sleep(3 * time.Second) // recorded 5 s after its deadline
				if got := r.bubbleTime(deadline); !got.Equal(trueDeadline) {
					t.Errorf("mapped back %v off the true time", got.Sub(trueDeadline))
				}
				if future := r.now().Add(time.Second); !r.bubbleTime(future).Equal(time.Now().Add(time.Duration(float64(time.Second) / tc.then))) {
					t.Errorf("a time ahead maps at the rate of now")
				}
			})
		})
	}
}
