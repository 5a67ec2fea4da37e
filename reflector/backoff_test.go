package reflector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

func testBackoff(jitter float64) backoff {
	o := Options[*corev1.ConfigMap]{Tuning: Tuning{BackoffInitial: time.Second, BackoffMax: 8 * time.Second, BackoffJitter: jitter, BackoffReset: time.Minute}}
	return newBackoff(o.withDefaults())
}

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	b := testBackoff(-1) // no jitter
	now := time.Now()
	var got []time.Duration
	for range 6 {
		d := b.next(now, 0)
		got = append(got, d)
		now = now.Add(d) // fail again right after each retry
	}
	assert.Equal(t, []time.Duration{1, 2, 4, 8, 8, 8}, seconds(got))
}

func TestBackoffResetsAfterAHealthyPeriod(t *testing.T) {
	b := testBackoff(-1)
	now := time.Now()
	for range 4 {
		now = now.Add(b.next(now, 0))
	}
	now = now.Add(59 * time.Second)
	assert.Equal(t, 8*time.Second, b.next(now, 0), "59s of health is less than BackoffReset")
	now = now.Add(8*time.Second + 61*time.Second)
	assert.Equal(t, time.Second, b.next(now, 0), "61s of health resets it")
}

func TestBackoffJitterStaysWithinItsFraction(t *testing.T) {
	b := testBackoff(0.5)
	for range 100 {
		b.base = 0
		d := b.next(time.Now(), 0)
		assert.GreaterOrEqual(t, d, time.Second)
		assert.LessOrEqual(t, d, 1500*time.Millisecond)
	}
}

func TestBackoffNeverWaitsLessThanTheServerAsked(t *testing.T) {
	b := testBackoff(-1)
	assert.Equal(t, 5*time.Second, b.next(time.Now(), 5*time.Second), "Retry-After: 5 beats the 1s backoff")
	assert.Equal(t, 2*time.Second, b.next(time.Now(), 0), "and the sequence goes on from where it was")
}

func TestDefaultsMatchTheDocumentedValues(t *testing.T) {
	o := Options[*corev1.ConfigMap]{}.withDefaults()
	assert.Equal(t, "*v1.ConfigMap", o.Name)
	assert.EqualValues(t, 500, o.PageSize)
	assert.Equal(t, ListConsistent, o.InitialList)
	assert.False(t, o.StreamingList)
	assert.Equal(t, 5*time.Minute, o.WatchTimeout)
	assert.Equal(t, 1.0, o.WatchTimeoutJitter)
	assert.Equal(t, time.Second, o.ShortWatch)
	assert.Equal(t, 800*time.Millisecond, o.BackoffInitial)
	assert.Equal(t, 30*time.Second, o.BackoffMax)
	assert.Equal(t, 2.0, o.BackoffFactor)
	assert.Equal(t, 1.0, o.BackoffJitter)
	assert.Equal(t, 2*time.Minute, o.BackoffReset)
	assert.Zero(t, o.ResyncPeriod)
	assert.NotNil(t, o.OnError)

	o = Options[*corev1.ConfigMap]{Tuning: Tuning{PageSize: -1, WatchTimeoutJitter: -1, BackoffJitter: -1}}.withDefaults()
	assert.Zero(t, o.PageSize, "negative: no limit")
	assert.Zero(t, o.WatchTimeoutJitter, "negative: no jitter")
	assert.Zero(t, o.BackoffJitter)
}

func seconds(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Second
	}
	return out
}
