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
