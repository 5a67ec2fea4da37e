package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFakeClockRunsDueFunctionsDuringStepInTimeOrder(t *testing.T) {
	clock := NewFakeClock(epoch)
	var ran []string
	record := func(name string) func() {
		return func() { ran = append(ran, name+"@"+clock.Now().Sub(epoch).String()) }
	}
	clock.AfterFunc(3*time.Second, record("c"))
	clock.AfterFunc(time.Second, record("a"))
	clock.AfterFunc(time.Second, record("a2")) // same time: in scheduling order
	clock.AfterFunc(0, record("now"))
	clock.AfterFunc(2*time.Second, func() {
		ran = append(ran, "b")
		clock.AfterFunc(0, record("scheduled-by-b")) // due at once: runs in this Step
	})
	assert.Empty(t, ran, "nothing runs inside AfterFunc, not even with d = 0")

	clock.Step(2 * time.Second)
	assert.Equal(t, []string{"now@2s", "a@2s", "a2@2s", "b", "scheduled-by-b@2s"}, ran,
		"Now is already the new time while they run")
	assert.Equal(t, 1, clock.Timers())
	clock.Step(time.Second)
	assert.Equal(t, "c@3s", ran[len(ran)-1])
	assert.Equal(t, 0, clock.Timers())
}

func TestFakeClockTimerStopUnschedulesOnce(t *testing.T) {
	clock := NewFakeClock(epoch)
	ran := false
	timer := clock.AfterFunc(time.Second, func() { ran = true })
	assert.True(t, timer.Stop())
	assert.False(t, timer.Stop(), "already stopped")
	clock.Step(time.Hour)
	assert.False(t, ran)

	fired := clock.AfterFunc(time.Second, func() {})
	clock.Step(time.Second)
	assert.False(t, fired.Stop(), "already ran")
}

func TestFakeClockStepPanicsOnANegativeDuration(t *testing.T) {
	assert.Panics(t, func() { NewFakeClock(epoch).Step(-time.Second) })
}
