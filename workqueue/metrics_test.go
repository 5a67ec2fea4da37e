package workqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/informer"
)

func TestMetricsAreComputedFromTheTraceEventsAlone(t *testing.T) {
	m := NewMetrics()
	q, clock := newFake(Options[string]{
		RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute)),
		Trace:       m.Observe,
	})
	q.Add("a")
	q.Add("b")
	q.Add("a") // deduplicated: not an add
	clock.Step(2 * time.Second)
	mustGet(t, q) // a waited 2s
	clock.Step(3 * time.Second)
	mustGet(t, q) // b waited 5s
	q.Add("b")    // postponed: added at Done
	q.Done("a")   // a took 3s
	q.AddRateLimited("a")

	s := m.Snapshot(clock.Now().Add(4 * time.Second))
	assert.Equal(t, MetricsSnapshot{
		Depth:          0,
		Adds:           2,
		Retries:        1,
		QueueWait:      DurationStats{Count: 2, Total: 7 * time.Second, Max: 5 * time.Second},
		WorkDuration:   DurationStats{Count: 1, Total: 3 * time.Second, Max: 3 * time.Second},
		Processing:     1,
		LongestRunning: 4 * time.Second, // b, got 4s before the snapshot
		UnfinishedWork: 4 * time.Second,
	}, s)

	q.Done("b") // b took 0s, and is queued again
	clock.Step(time.Second)
	s = m.Snapshot(clock.Now())
	assert.Equal(t, 2, s.Depth, "b again, and a after its 1s delay")
	assert.Equal(t, 4, s.Adds)
	assert.Equal(t, 0, s.Processing)
	assert.Zero(t, s.LongestRunning)
	assert.Equal(t, 3*time.Second/2, s.WorkDuration.Mean())
	assert.Equal(t, "depth 2, adds 4, retries 1, failures 0\n"+
		"queue wait: 2 × mean 3.5s, max 5s; work duration: 2 × mean 1.5s, max 3s\n"+
		"processing 0, longest running 0s, unfinished work 0s", s.String())
}

func TestMetricsIgnoreEventsOfOtherStages(t *testing.T) {
	m := NewMetrics()
	m.Observe(informer.TraceEvent{Stage: informer.StageFIFO, Kind: KindAdded, Key: "a"})
	assert.Equal(t, MetricsSnapshot{}, m.Snapshot(epoch))
	assert.Zero(t, DurationStats{}.Mean())
}

func TestMetricsCountEveryFailedKindOnce(t *testing.T) {
	m := NewMetrics()
	for _, kind := range []string{KindFailed, KindPanicked, KindGaveUp, KindDone} {
		m.Observe(informer.TraceEvent{Stage: informer.StageWorkqueue, Kind: kind, Key: "a"})
	}
	assert.Equal(t, 3, m.Snapshot(epoch).Failures, "an error, a panic and a terminal error; Done is none")
}
