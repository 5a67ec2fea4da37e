package workqueue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/informer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddAfterAddsTheKeyOnlyWhenItsDelayIsOver(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.AddAfter("a", 10*time.Second)
	clock.Step(9 * time.Second)
	assert.Equal(t, 0, q.Len())
	clock.Step(time.Second)
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, 0, clock.Timers(), "no key waits, so no timer is armed")
}

func TestDelayedKeysAreAddedInDueOrderNotInTheOrderTheyWereDelayed(t *testing.T) {
	q, clock := newFake(Options[string]{})
	for _, d := range []struct {
		key   string
		delay time.Duration
	}{{"c", 3 * time.Second}, {"a", time.Second}, {"d", 4 * time.Second}, {"b", 2 * time.Second}} {
		q.AddAfter(d.key, d.delay)
	}
	clock.Step(time.Minute) // all due at once
	var got []string
	for q.Len() > 0 {
		got = append(got, mustGet(t, q))
	}
	assert.Equal(t, []string{"a", "b", "c", "d"}, got)
}

func TestKeysDueAtTheSameTimeAreAddedInTheOrderTheyWereDelayed(t *testing.T) {
	q, clock := newFake(Options[string]{})
	for _, key := range []string{"z", "x", "y"} {
		q.AddAfter(key, time.Second)
	}
	clock.Step(time.Second)
	assert.Equal(t, []string{"z", "x", "y"}, []string{mustGet(t, q), mustGet(t, q), mustGet(t, q)})
}

func TestAddAfterOfAWaitingKeyKeepsTheEarlierDueTime(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.AddAfter("sooner", 5*time.Second)
	q.AddAfter("sooner", 2*time.Second) // moves it earlier
	q.AddAfter("later", 2*time.Second)
	q.AddAfter("later", 5*time.Second) // ignored: already due sooner

	clock.Step(2 * time.Second)
	require.Equal(t, 2, q.Len(), "both were due at 2s")
	clock.Step(3 * time.Second)
	assert.Equal(t, 2, q.Len(), "and each waited only once")
}

func TestAddAfterWithNoDelayAddsAtOnce(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.AddAfter("zero", 0)
	q.AddAfter("negative", -time.Second)
	assert.Equal(t, 2, q.Len())
	assert.Equal(t, 0, clock.Timers())
}

func TestADelayedKeyThatIsStillQueuedWhenDueIsDeduplicated(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.Add("a")
	q.AddAfter("a", time.Second) // waiting is separate from queued
	clock.Step(time.Second)
	assert.Equal(t, 1, q.Len())
}

func TestADelayedKeyThatIsBeingProcessedWhenDueIsPostponed(t *testing.T) {
	q, clock := newFake(Options[string]{})
	q.Add("a")
	require.Equal(t, "a", mustGet(t, q))
	q.AddAfter("a", time.Second)
	clock.Step(time.Second)
	assert.Equal(t, 0, q.Len(), "never handed to a second worker")
	q.Done("a")
	assert.Equal(t, 1, q.Len())
}

func TestOneTimerIsArmedForTheEarliestWaitingKey(t *testing.T) {
	q, clock := newFake(Options[string]{})
	for n, d := range []time.Duration{5, 3, 8, 1, 9} {
		q.AddAfter(string(rune('a'+n)), d*time.Second)
		assert.Equal(t, 1, clock.Timers())
	}
	for range 9 {
		clock.Step(time.Second)
		if len(q.waiting) > 0 {
			assert.Equal(t, 1, clock.Timers())
			assert.Equal(t, q.waiting[0].at, q.timerAt, "armed for the earliest")
		}
	}
	assert.Equal(t, 5, q.Len())
	assert.Equal(t, 0, clock.Timers())
}

// The real clock, in the virtual time of a synctest bubble: time.AfterFunc
// fires when the bubble's time reaches it, and no test waits an hour.
func TestDelaysFireOnTheRealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New(Options[string]{})
		q.AddAfter("later", time.Hour)
		q.AddAfter("sooner", time.Minute)
		time.Sleep(time.Minute)
		synctest.Wait() // until the timer's goroutine has added the key
		assert.Equal(t, 1, q.Len())
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 2, q.Len())
		q.ShutDown()
	})
}

// Without a Trace, AddAfter builds no event detail: an AddAfter of a key
// already waiting (a retry whose earlier due time wins, the commonest
// repeat) allocates nothing. With a Trace the same call allocates (the
// detail, the key's text), which shows the measurement can see it.
func TestAnAddAfterOfAWaitingKeyAllocatesNothingWithoutATrace(t *testing.T) {
	again := func(trace informer.TraceHook) float64 {
		q, _ := newFake(Options[int]{Trace: trace})
		q.AddAfter(12345, time.Minute)
		return testing.AllocsPerRun(1000, func() { q.AddAfter(12345, time.Hour) })
	}
	assert.Zero(t, again(nil), "no trace")
	assert.NotZero(t, again(func(informer.TraceEvent) {}), "a trace")
}
