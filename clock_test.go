package informer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// WithTimeout and Sleep wait on the clock they are given: with a fake
// clock, nothing ends until the clock is stepped past the duration, and
// then the context ends with DeadlineExceeded as its cause.
func TestWithTimeoutAndSleepWaitOnTheClockTheyAreGiven(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Now())
	ctx, cancel := informer.WithTimeout(context.Background(), clock, time.Minute)
	defer cancel()
	slept := make(chan bool, 1)
	go func() { slept <- informer.Sleep(context.Background(), clock, time.Minute) }()
	for clock.Timers() < 2 { // the timeout's timer and the sleep's
		time.Sleep(time.Millisecond)
	}

	clock.Step(59 * time.Second)
	require.NoError(t, ctx.Err(), "59 s of a 1 min timeout have passed")
	clock.Step(time.Second)
	<-ctx.Done()
	require.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded, "it ends as a timeout does")
	require.True(t, <-slept, "the whole minute passed")

	ended, stop := context.WithCancel(context.Background())
	stop()
	require.False(t, informer.Sleep(ended, clock, time.Hour), "a context that ends cuts the sleep short")
}

// A nil pointer held in a Clock (a *FakeClock declared and never made)
// is no clock, as nil is: ClockOrReal gives the real clock for both, as
// workqueue.New does, instead of keeping it for the first Now or
// AfterFunc to panic on, deep inside whichever stage took the option.
func TestClockOrRealTakesANilPointerHeldInAClockAsNoClock(t *testing.T) {
	var fake *workqueue.FakeClock
	require.Equal(t, informer.RealClock{}, informer.ClockOrReal(fake))
	require.Equal(t, informer.RealClock{}, informer.ClockOrReal(nil))
	clock := workqueue.NewFakeClock(time.Now())
	require.Same(t, clock, informer.ClockOrReal(clock))
}
