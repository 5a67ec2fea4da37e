package readyourwrites_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/workqueue"
)

// A hold tells its queue to ask again within MaxHold. A key held when its
// queue went away (a term's end: ShutDown drops a held key) and asked
// again only much later, by another queue sharing the guard, was not
// waiting meanwhile: the hold it ends is reported as lasting MaxHold at
// most, in the hold-duration metric and the trace event, not an hour.
// (Found by a review: the metric read 3,600 s.)
func TestAHoldItsQueueAbandonedIsReportedAsNoLongerThanMaxHold(t *testing.T) {
	inf, api := newCache(t) // not run yet: its cache lags
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	memory := metrics.NewMemory()
	var details []string
	guard := must(readyourwrites.New(readyourwrites.Options{Clock: clock, Name: "g",
		Metrics: must(metrics.NewRegistry(memory)),
		Trace: func(e informer.TraceEvent) {
			if e.Kind == readyourwrites.KindReleased {
				details = append(details, e.Detail)
			}
		}}))
	written := must(api.Create(configMap("settings")))
	require.NoError(t, readyourwrites.Track(guard, inf).Wrote(owner, written))
	held, _, _ := guard.Hold(owner)
	require.True(t, held)
	// The queue that held it is gone; the cache catches up.
	run(t, inf)
	require.NoError(t, inf.WaitFor(t.Context(), written.ResourceVersion))

	clock.Step(time.Hour)
	held, _, _ = guard.Hold(owner) // another queue, an hour later
	assert.False(t, held)
	sum, _ := memory.Sum("listwatch_guard_hold_duration_seconds", "g")
	assert.Equal(t, 5.0, sum, "the hold waited MaxHold (5 s) at most")
	assert.Equal(t, []string{"5s"}, details)
}
