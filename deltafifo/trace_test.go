package deltafifo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

func TestTraceTellsWhatHappenedToEveryKey(t *testing.T) {
	var events []string
	hook := func(e informer.TraceEvent) {
		assert.Equal(t, informer.StageFIFO, e.Stage)
		events = append(events, e.Kind+" "+e.Key+" "+e.Detail)
	}
	c := cache{key("old"): cm("old", "1")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c, Trace: hook})
	require.NoError(t, f.Delete(cm("nobody", "2")))
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("new", "3")}, "3"))
	require.NoError(t, f.Delete(cm("old", "4")))
	popAll(t, f, c)

	assert.Equal(t, []string{
		"ignored default/nobody delete of a key nobody knows",
		"queued default/new Replaced",
		"tombstoned default/old absent from the list at rv 3",
		"queued default/old Deleted (final state unknown)",
		"replaced  1 listed, 1 tombstones, 2 keys queued",
		"coalesced default/old two deletes became one",
		"popped default/new 1 deltas, newest Replaced, initial list",
		"processed default/new ",
		"popped default/old 1 deltas, newest Deleted, initial list",
		"processed default/old ",
	}, events)
}

func TestNoTraceHookMeansNoAllocationsForTracing(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	obj := cm("a", "1")
	require.NoError(t, f.Add(obj))
	// Update of a key already queued appends one delta to a slice that has
	// room after the first few: with no hook, that is all the work there is.
	for range 8 {
		require.NoError(t, f.Update(obj))
	}
	allocs := testing.AllocsPerRun(100, func() { _ = f.Update(obj) })
	assert.LessOrEqual(t, allocs, 1.0, "an Update with no hook allocates only for its delta slice's growth")
}

// A tombstone for a key whose queued deltas end in a delete merges into
// it: KindTombstoned is followed by KindCoalesced, not KindQueued, as
// KindTombstoned's doc says. (Found by a docs audit: the doc promised a
// KindQueued event every time.)
func TestATombstoneMergedIntoAQueuedDeleteIsTracedAsCoalesced(t *testing.T) {
	var events []string
	hook := func(e informer.TraceEvent) {
		if e.Key == "default/old" {
			events = append(events, e.Kind+" "+e.Detail)
		}
	}
	c := cache{key("old"): cm("old", "1")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c, Trace: hook})
	require.NoError(t, f.Delete(cm("old", "2")))
	require.NoError(t, f.Replace(nil, "3"))
	assert.Equal(t, []string{
		"queued Deleted",
		"tombstoned absent from the list at rv 3",
		"coalesced two deletes became one",
	}, events)
}

// The package doc's tracing section names what emits: BeginReplace, which
// queues nothing, and WaitForRoom, which only waits, emit no event; a
// part's objects are traced as queued, the replacement at its
// FinishReplace. (Found by a docs audit: the doc said every step emits.)
func TestBeginReplaceAndWaitForRoomEmitNoTraceEvent(t *testing.T) {
	var kinds []string
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{Trace: func(e informer.TraceEvent) { kinds = append(kinds, e.Kind) }})
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.WaitForRoom(t.Context()))
	assert.Empty(t, kinds)
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "1")}))
	require.NoError(t, f.FinishReplace("1"))
	assert.Equal(t, []string{deltafifo.KindQueued, deltafifo.KindReplaced}, kinds)
}
