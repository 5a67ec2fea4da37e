package workqueue

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/listwatch/informer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceTellsEveryChangeOfEveryKeyInOrder(t *testing.T) {
	var rec recorder
	q, clock := newFake(Options[string]{
		RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute)),
		Trace:       rec.hook,
	})
	for _, step := range []struct {
		what string
		do   func()
		want []string
	}{
		{"a new key is added; a second Add is deduplicated",
			func() { q.Add("a"); q.Add("a"); q.Add("b") },
			[]string{"workqueue  added  a", "workqueue  deduplicated  a  already queued", "workqueue  added  b"}},
		{"an Add of a held key is postponed, once",
			func() { mustGet(t, q); q.Add("a"); q.Add("a") },
			[]string{"workqueue  got  a", "workqueue  postponed  a", "workqueue  deduplicated  a  already postponed"}},
		{"Done adds the postponed key",
			func() { q.Done("a") },
			[]string{"workqueue  done  a", "workqueue  added  a  added while processing"}},
		{"a failure is requeued through the limiter, then delayed",
			func() { mustGet(t, q); q.AddRateLimited("b"); q.Done("b") },
			[]string{"workqueue  got  b", "workqueue  requeued  b  retry 1 in 1s", "workqueue  delayed  b  in 1s", "workqueue  done  b"}},
		{"the delay ends",
			func() { clock.Step(time.Second) },
			[]string{"workqueue  added  b  delay over"}},
		{"a success forgets the failures, and only then says so",
			func() { q.Forget("b"); q.Forget("b") },
			[]string{"workqueue  forgotten  b"}},
		{"the earlier due time wins",
			func() { q.AddAfter("c", 5*time.Second); q.AddAfter("c", 2*time.Second); q.AddAfter("c", 3*time.Second) },
			[]string{"workqueue  delayed  c  in 5s", "workqueue  delayed  c  in 2s, moved earlier",
				"workqueue  deduplicated  c  already waiting, due in 2s"}},
		{"shutdown drops the delayed keys and every later Add",
			func() { q.ShutDown(); q.Add("d"); q.AddAfter("d", time.Second); q.ShutDown() },
			[]string{"workqueue  shut-down  2 queued, 0 processing, 1 delayed dropped",
				"workqueue  dropped  d  shutting down", "workqueue  dropped  d  shutting down"}},
	} {
		step.do()
		require.Equal(t, step.want, rec.take(), step.what)
	}
}

func TestTraceTellsRunsFailuresAndPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		q := New(Options[string]{RateLimiter: must(NewFastSlowRateLimiter[string](time.Second, time.Minute, 5)), Trace: rec.hook})
		attempt := 0
		stop := startRun(q, func(context.Context, string) (Result, error) {
			attempt++
			switch attempt {
			case 1:
				return Result{}, errors.New("conflict")
			case 2:
				panic("nil map")
			}
			return Result{}, nil
		}, RunOptions[string]{OnError: func(string, error) {}})
		q.Add("a")
		time.Sleep(time.Minute)
		stop()
		assert.Equal(t, []string{
			"workqueue  added  a",
			"workqueue  got  a",
			"workqueue  failed  a  conflict",
			"workqueue  requeued  a  retry 1 in 1s",
			"workqueue  delayed  a  in 1s",
			"workqueue  done  a",
			"workqueue  added  a  delay over",
			"workqueue  got  a",
			"workqueue  panicked  a  nil map",
			"workqueue  requeued  a  retry 2 in 1s",
			"workqueue  delayed  a  in 1s",
			"workqueue  done  a",
			"workqueue  added  a  delay over",
			"workqueue  got  a",
			"workqueue  forgotten  a",
			"workqueue  done  a",
		}, rec.take())
	})
}

// A retry with no delay is an Add of a key its worker still holds: it is
// postponed, and added at Done. KindRequeued's comment once said
// KindAdded followed.
func TestARetryWithNoDelayUnderRunIsPostponedUntilDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rec recorder
		q := New(Options[string]{RateLimiter: must(NewExponentialRateLimiter[string](0, 0)), Trace: rec.hook})
		stop := startRun(q, failOnce(errors.New("conflict")), RunOptions[string]{OnError: func(string, error) {}})
		q.Add("a")
		synctest.Wait()
		stop()
		assert.Equal(t, []string{
			"workqueue  added  a",
			"workqueue  got  a",
			"workqueue  failed  a  conflict",
			"workqueue  requeued  a  retry 1 in 0s",
			"workqueue  postponed  a",
			"workqueue  done  a",
			"workqueue  added  a  added while processing",
			"workqueue  got  a",
			"workqueue  forgotten  a",
			"workqueue  done  a",
		}, rec.take())
	})
}

// formattedKeys counts calls of countingKey.String.
var formattedKeys atomic.Int64

// countingKey is a key type that counts how often it is formatted.
type countingKey struct{ name string }

func (k countingKey) String() string {
	formattedKeys.Add(1)
	return k.name
}

func TestWithNoTraceHookNoKeyIsEverFormatted(t *testing.T) {
	exercise := func(opts Options[countingKey]) {
		q, clock := newFake(opts)
		a, b := countingKey{"a"}, countingKey{"b"}
		q.Add(a)
		q.Add(a)
		mustGet(t, q)
		q.Add(a)
		q.AddRateLimited(a)
		q.Done(a)
		q.Forget(a)
		q.AddAfter(b, time.Second)
		clock.Step(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		Run(ctx, q, func(context.Context, countingKey) (Result, error) {
			cancel()
			return Result{}, errors.New("fails")
		}, RunOptions[countingKey]{OnError: func(countingKey, error) {}})
		q.ShutDown()
		q.Add(b)
	}

	formattedKeys.Store(0)
	exercise(Options[countingKey]{})
	assert.Zero(t, formattedKeys.Load(), "no hook: no fmt.Sprint of a key")

	var rec recorder
	exercise(Options[countingKey]{Trace: rec.hook})
	assert.NotZero(t, formattedKeys.Load(), "with a hook, keys are formatted for the events")
	assert.Contains(t, rec.take(), "workqueue  failed  a  fails")
}

// A trace consumer that steps a FakeClock when it sees "delayed" (as
// ExampleResult does) must find the timer already armed: otherwise the
// Step fires nothing and the key waits a second delay it never asked for.
func TestDelayedIsTracedOnceTheTimerIsArmed(t *testing.T) {
	var clock *FakeClock
	var timersAtDelayed []int
	q, clock := newFake(Options[string]{Trace: func(e informer.TraceEvent) {
		if e.Kind == KindDelayed {
			timersAtDelayed = append(timersAtDelayed, clock.Timers())
		}
	}})
	q.AddAfter("a", time.Hour)                    // a new waiting key
	q.AddAfter("a", time.Minute)                  // moved earlier: re-armed
	assert.Equal(t, []int{1, 1}, timersAtDelayed) // never traced before its timer exists
}
