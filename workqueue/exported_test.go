package workqueue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/metrics"
)

func newRegistry(t testing.TB) (*metrics.Registry, *metrics.Memory) {
	t.Helper()
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	return reg, mem
}

// value reads one series of the queue named "q".
func value(t testing.TB, mem *metrics.Memory, name string) float64 {
	t.Helper()
	v, ok := mem.Value(name, "q")
	require.True(t, ok, "series %s{name=q} exists", name)
	return v
}

func TestExportedMetricsHaveClientGosNamesAndFollowTheEvents(t *testing.T) {
	reg, mem := newRegistry(t)
	clock := NewFakeClock(epoch)
	qm, err := NewExportedMetrics(reg, "q", clock)
	require.NoError(t, err)
	q := New(Options[string]{Clock: clock, Trace: qm.Hook(),
		RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})

	q.Add("a")
	q.Add("b")
	q.Add("a") // deduplicated: not an add
	assert.Equal(t, 2.0, value(t, mem, "workqueue_adds_total"))
	assert.Equal(t, 2.0, value(t, mem, "workqueue_depth"))

	clock.Step(2 * time.Second)
	mustGet(t, q)
	assert.Equal(t, 1.0, value(t, mem, "workqueue_depth"))
	assert.Equal(t, 1.0, value(t, mem, "workqueue_queue_duration_seconds"), "one observation")

	clock.Step(3 * time.Second)
	qm.updateInProgress()
	assert.Equal(t, 3.0, value(t, mem, "workqueue_longest_running_processor_seconds"))
	assert.Equal(t, 3.0, value(t, mem, "workqueue_unfinished_work_seconds"))
	mustGet(t, q)
	clock.Step(time.Second)
	qm.updateInProgress()
	assert.Equal(t, 4.0, value(t, mem, "workqueue_longest_running_processor_seconds"), "a, held 4s")
	assert.Equal(t, 5.0, value(t, mem, "workqueue_unfinished_work_seconds"), "a 4s, b 1s")

	q.Done("a")
	q.AddRateLimited("a")
	assert.Equal(t, 1.0, value(t, mem, "workqueue_work_duration_seconds"), "one observation")
	assert.Equal(t, 1.0, value(t, mem, "workqueue_retries_total"))
	q.Done("b")
	qm.updateInProgress()
	assert.Zero(t, value(t, mem, "workqueue_unfinished_work_seconds"), "nothing is held")
	assert.Zero(t, value(t, mem, "workqueue_longest_running_processor_seconds"))
}

func TestExportedMetricsCountTheKeysRunGaveUpOn(t *testing.T) {
	reg, mem := newRegistry(t)
	qm, err := NewExportedMetrics(reg, "q", nil)
	require.NoError(t, err)
	hook := qm.Hook()
	hook(informer.TraceEvent{Stage: informer.StageWorkqueue, Kind: KindGaveUp, Key: "a", Detail: "terminal: bad spec"})
	hook(informer.TraceEvent{Stage: informer.StageFIFO, Kind: KindGaveUp, Key: "b"}) // another stage: ignored
	assert.Equal(t, 1.0, value(t, mem, "listwatch_workqueue_gave_up_total"))
}

func TestTwoQueuesWithOneNameInOneRegistryAreAnError(t *testing.T) {
	reg, _ := newRegistry(t)
	_, err := NewExportedMetrics(reg, "configmaps", nil)
	require.NoError(t, err)
	_, err = NewExportedMetrics(reg, "configmaps", nil)
	dup, ok := errors.AsType[*metrics.DuplicateError](err)
	require.True(t, ok, "a *metrics.DuplicateError, not %v", err)
	assert.Equal(t, []string{"configmaps"}, dup.LabelValues)
	assert.ErrorContains(t, err, `workqueue "configmaps" is registered twice`)

	_, err = NewExportedMetrics(reg, "", nil)
	assert.ErrorContains(t, err, "the workqueue has no name")
}

func TestNoRegistryMeansNoHookAndNothingToRun(t *testing.T) {
	qm, err := NewExportedMetrics(nil, "q", nil)
	require.NoError(t, err)
	assert.Nil(t, qm)
	assert.Nil(t, qm.Hook(), "a nil hook: the queue builds no event")
	qm.Run(context.Background()) // returns at once
}

// With no provider installed, tracing costs no allocation: the hook is
// nil, so no event is built and no key text formatted. The measured path
// is a handler's commonest call, an Add of a key already queued; with a
// provider the same call allocates (the key's text, the event), which
// shows the measurement can see it. BenchmarkAddGetDoneExportedMetrics
// measures the whole Add, Get, Done cycle: 0 allocs/op with no provider.
func TestNoProviderMeansNoAllocationOnTheHotPath(t *testing.T) {
	addAgain := func(hook informer.TraceHook) float64 {
		q := New(Options[int]{Trace: hook})
		q.Add(12345) // a key whose text is not one of the runtime's small preallocated numbers
		return testing.AllocsPerRun(1000, func() { q.Add(12345) })
	}
	none, err := NewExportedMetrics(nil, "q", nil)
	require.NoError(t, err)
	assert.Zero(t, addAgain(informer.Tee(nil, none.Hook())), "no provider")

	reg, _ := newRegistry(t)
	some, err := NewExportedMetrics(reg, "q", nil)
	require.NoError(t, err)
	assert.NotZero(t, addAgain(some.Hook()), "a provider")
}

func TestExportedMetricsRunUpdatesTheGaugesOnEveryTickAndStopsWithItsContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	reg, mem := newRegistry(t)
	clock := NewFakeClock(epoch)
	qm, err := NewExportedMetrics(reg, "q", clock)
	require.NoError(t, err)
	q := New(Options[string]{Clock: clock, Trace: qm.Hook()})
	q.Add("a")
	mustGet(t, q)

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); qm.Run(ctx) }()
	for want := 1; want <= 3; want++ {
		waitForTimer(t, clock) // Run has armed its tick
		clock.Step(UnfinishedWorkPeriod)
		require.Eventually(t, func() bool {
			v, _ := mem.Value("workqueue_longest_running_processor_seconds", "q")
			return v == (time.Duration(want) * UnfinishedWorkPeriod).Seconds()
		}, time.Minute, time.Millisecond, "tick %d", want)
	}
	cancel()
	<-ran
	assert.Zero(t, clock.Timers(), "Run stopped its timer")
}

// waitForTimer waits until a timer is armed on clock. The bound is a
// guard against a hang, not a timing.
func waitForTimer(t *testing.T, clock *FakeClock) {
	t.Helper()
	require.Eventually(t, func() bool { return clock.Timers() > 0 }, time.Minute, time.Millisecond)
}

// The hot path with no provider, and with one (a metrics.Memory): the
// report's allocs/op is the figure to read. With none it is 0.
func BenchmarkAddGetDoneExportedMetrics(b *testing.B) {
	b.Run("no-provider", func(b *testing.B) {
		qm, _ := NewExportedMetrics(nil, "q", nil)
		benchCycle(b, 1, qm.Hook())
	})
	b.Run("memory-provider", func(b *testing.B) {
		reg, _ := newRegistry(b)
		qm, err := NewExportedMetrics(reg, "q", nil)
		require.NoError(b, err)
		benchCycle(b, 1, qm.Hook())
	})
}

func TestTheDurationBucketsAreClientGosTenFrom10nsTo10s(t *testing.T) {
	require.Len(t, queueBuckets, 10)
	assert.Equal(t, 10e-9, queueBuckets[0])
	assert.Equal(t, 10.0, queueBuckets[9])
}

// Two metrics count something narrower than client-go's (docs/15): an
// AddAfter is no retry, only AddRateLimited is; and a key added while a
// worker holds it enters the depth, and starts its wait, when Done
// queues it, not at the Add.
func TestExportedRetriesCountAddRateLimitedOnlyAndAPostponedKeyCountsFromDone(t *testing.T) {
	reg, mem := newRegistry(t)
	clock := NewFakeClock(epoch)
	qm, err := NewExportedMetrics(reg, "q", clock)
	require.NoError(t, err)
	q := New(Options[string]{Clock: clock, Trace: qm.Hook(),
		RateLimiter: must(NewExponentialRateLimiter[string](time.Second, time.Minute))})

	q.AddAfter("later", time.Minute)
	assert.Zero(t, value(t, mem, "workqueue_retries_total"), "an AddAfter is no retry")

	q.Add("a")
	mustGet(t, q)
	q.Add("a") // postponed: a worker holds it
	assert.Zero(t, value(t, mem, "workqueue_depth"), "a postponed key is not queued yet")
	clock.Step(5 * time.Second)
	q.Done("a") // queued now
	assert.Equal(t, 1.0, value(t, mem, "workqueue_depth"))
	clock.Step(2 * time.Second)
	mustGet(t, q)
	sum, ok := mem.Sum("workqueue_queue_duration_seconds", "q")
	require.True(t, ok)
	assert.Equal(t, 2.0, sum, "the waits: 0 s, then 2 s from Done, not 7 s from the Add")
}

// New takes a nil pointer held in Options.Clock as the real clock, and
// NewExportedMetrics, told to take the queue's clock, must take the same
// value the same way rather than panic in Run. (Found by review: Run
// panicked on the nil *FakeClock.)
func TestExportedMetricsTakeANilPointerClockAsTheRealClockAsNewDoes(t *testing.T) {
	reg, _ := newRegistry(t)
	var clock *FakeClock // a fake clock only some runs set
	qm, err := NewExportedMetrics(reg, "q", clock)
	require.NoError(t, err)
	q := New(Options[string]{Clock: clock, Trace: qm.Hook()})
	q.Add("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NotPanics(t, func() { qm.Run(ctx) })
}
