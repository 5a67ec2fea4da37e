package expectations_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/expectations"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newExpectations[K comparable](t *testing.T, opts expectations.Options) *expectations.Expectations[K] {
	t.Helper()
	e, err := expectations.New[K](opts)
	require.NoError(t, err)
	return e
}

func TestANegativeTTLIsAnErrorThatNamesIt(t *testing.T) {
	_, err := expectations.New[string](expectations.Options{TTL: -time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.TTL is -1s")
}

// A count of missing children gone negative (more found than wanted,
// subtracted the wrong way round) would read as "satisfied" at once: it
// is an error naming the call and the count, and the key keeps the
// expectation it had.
func TestANegativeCountIsAnErrorAndChangesNothing(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	require.NoError(t, e.ExpectCreations("web", 1))
	err := e.ExpectCreations("web", -2)
	require.ErrorContains(t, err, "ExpectCreations(web, -2)")
	require.ErrorContains(t, e.ExpectDeletions("web", -1), "ExpectDeletions(web, -1)")
	assert.False(t, e.Satisfied("web"), "the expectation of one creation is kept")
}

func TestAZeroTTLMeansTheDefault(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := newExpectations[string](t, expectations.Options{Now: clock.Now})
	e.ExpectCreations("web", 1)
	clock.now = clock.now.Add(expectations.DefaultTTL - time.Second)
	assert.False(t, e.Satisfied("web"), "within DefaultTTL")
	clock.now = clock.now.Add(2 * time.Second)
	assert.True(t, e.Satisfied("web"), "past DefaultTTL")
}

func TestAKeyWithNoExpectationIsSatisfied(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	assert.True(t, e.Satisfied("web"))
}

func TestExpectedCreationsHoldTheKeyUntilAllAreObserved(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	e.ExpectCreations("web", 2)
	assert.False(t, e.Satisfied("web"))
	e.CreationObserved("web")
	assert.False(t, e.Satisfied("web"), "one of two seen")
	e.CreationObserved("web")
	assert.True(t, e.Satisfied("web"))
	assert.True(t, e.Satisfied("db"), "other keys are unaffected")
}

func TestExpectedDeletionsHoldTheKeyUntilAllAreObserved(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	e.ExpectDeletions("web", 1)
	assert.False(t, e.Satisfied("web"))
	e.DeletionObserved("web")
	assert.True(t, e.Satisfied("web"))
}

func TestMoreObservedThanExpectedStillCountsAsSatisfied(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	e.ExpectCreations("web", 1)
	e.CreationObserved("web")
	e.CreationObserved("web") // someone else created one too
	assert.True(t, e.Satisfied("web"))
}

func TestAnExpectationOlderThanTheTTLIsAssumedLost(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := newExpectations[string](t, expectations.Options{TTL: time.Minute, Now: clock.Now})
	e.ExpectCreations("web", 1)
	clock.now = clock.now.Add(time.Minute)
	assert.False(t, e.Satisfied("web"), "exactly at the TTL it still holds")
	clock.now = clock.now.Add(time.Nanosecond)
	assert.True(t, e.Satisfied("web"), "past the TTL the event is assumed lost")
}

func TestObservationsForAKeyWithoutExpectationAreIgnored(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	e.CreationObserved("web") // an event from before this controller started
	e.ExpectCreations("web", 1)
	assert.False(t, e.Satisfied("web"), "an old observation does not pay for a new expectation")
}

func TestForgetDropsTheExpectation(t *testing.T) {
	e := newExpectations[string](t, expectations.Options{})
	e.ExpectCreations("web", 3)
	e.Forget("web")
	assert.True(t, e.Satisfied("web"))
}

func TestConcurrentWorkersAndHandlersAgree(t *testing.T) {
	e := newExpectations[int](t, expectations.Options{})
	const keys, each = 50, 20
	for k := range keys {
		e.ExpectCreations(k, each)
	}
	var wg sync.WaitGroup
	for k := range keys {
		wg.Go(func() {
			for range each {
				e.CreationObserved(k)
			}
		})
		wg.Go(func() { _ = e.Satisfied(k) })
	}
	wg.Wait()
	for k := range keys {
		assert.True(t, e.Satisfied(k), "key %d", k)
	}
}

func TestExpiresInSaysHowLongAnUnmetExpectationStillHoldsTheKey(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := newExpectations[string](t, expectations.Options{TTL: time.Minute, Now: clock.Now})
	assert.Zero(t, e.ExpiresIn("rs"), "no expectation holds nothing back")
	e.ExpectCreations("rs", 2)
	clock.now = clock.now.Add(20 * time.Second)
	assert.Equal(t, 40*time.Second+time.Nanosecond, e.ExpiresIn("rs"))
	clock.now = clock.now.Add(40 * time.Second)
	assert.False(t, e.Satisfied("rs"), "exactly at the TTL it still holds...")
	assert.Positive(t, e.ExpiresIn("rs"), "...so a requeue after ExpiresIn never finds it still unmet at once")
	clock.now = clock.now.Add(-40 * time.Second)
	e.CreationObserved("rs")
	e.CreationObserved("rs")
	assert.Zero(t, e.ExpiresIn("rs"), "met")
	e.ExpectDeletions("rs", 1)
	clock.now = clock.now.Add(2 * time.Minute)
	assert.Zero(t, e.ExpiresIn("rs"), "past the TTL: assumed lost")
	assert.True(t, e.Satisfied("rs"))
}

// The pattern decides with one call, ExpiresIn: at every instant it is
// positive exactly while Satisfied is false, up to the TTL's last
// nanosecond, so a key it says to wait for is always requeued.
func TestExpiresInIsPositiveExactlyWhileTheKeyIsUnsatisfied(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := newExpectations[string](t, expectations.Options{TTL: time.Minute, Now: clock.Now})
	e.ExpectCreations("web", 1)
	for _, elapsed := range []time.Duration{0, time.Minute - time.Nanosecond, time.Minute, time.Minute + time.Nanosecond, time.Hour} {
		clock.now = time.Unix(0, 0).Add(elapsed)
		wait, satisfied := e.ExpiresIn("web"), e.Satisfied("web")
		assert.Equal(t, !satisfied, wait > 0, "after %v: Satisfied %v, ExpiresIn %v", elapsed, satisfied, wait)
		if wait > 0 {
			clock.now = clock.now.Add(wait)
			assert.True(t, e.Satisfied("web"), "after %v plus ExpiresIn's %v: still unsatisfied", elapsed, wait)
		}
	}
}

// Asking Satisfied, then ExpiresIn for how long to wait, is two readings
// of the clock: the TTL can run out between them, and the reconcile
// hears "wait" and then 0, a requeue of nothing. So the pattern asks
// ExpiresIn alone; Expectations' comment once told a reconcile to ask
// Satisfied first.
func TestSatisfiedThenExpiresInCanSayWaitAndThenZero(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	e := newExpectations[string](t, expectations.Options{TTL: time.Minute, Now: clock.Now})
	e.ExpectCreations("web", 1)
	clock.now = clock.now.Add(time.Minute)
	require.False(t, e.Satisfied("web"), "at the TTL's last instant the key still waits")
	clock.now = clock.now.Add(time.Nanosecond) // the next reading of the clock
	assert.Zero(t, e.ExpiresIn("web"), "the TTL ran out between the two calls: a requeue after this is none")
}
