package deltafifo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
)

func TestDeltasOfOneKeyAccumulateOldestFirst(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "1")))
	require.NoError(t, f.Update(cm("a", "2")))
	require.NoError(t, f.Delete(cm("a", "3")))
	assert.Equal(t, 1, f.Len(), "one key, however many deltas")
	assert.Equal(t, popped{"default/a", "Added@1 Updated@2 Deleted@3", false}, popOne(t, f, nil))
}

func TestKeysPopInOrderOfFirstArrival(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "1")))
	require.NoError(t, f.Add(cm("b", "2")))
	require.NoError(t, f.Update(cm("a", "3"))) // a keeps its place at the front
	assert.Equal(t, []popped{
		{"default/a", "Added@1 Updated@3", false},
		{"default/b", "Added@2", false},
	}, popAll(t, f, nil))
}

func TestAKeyQueuedAgainAfterItsPopGoesToTheBack(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "1")))
	require.NoError(t, f.Add(cm("b", "2")))
	popOne(t, f, nil)
	require.NoError(t, f.Update(cm("a", "3")))
	assert.Equal(t, []popped{
		{"default/b", "Added@2", false},
		{"default/a", "Updated@3", false},
	}, popAll(t, f, nil))
}

func TestTwoDeletesInARowCollapseKeepingTheKnownFinalState(t *testing.T) {
	for _, tc := range []struct {
		name        string
		known, then string // which delete comes first: "known" or "unknown"
		want        string
	}{
		{"known then tombstone", "known", "unknown", "Added@1 Deleted@2"},
		{"tombstone then known", "unknown", "known", "Added@1 Deleted@3"},
		{"tombstone then tombstone", "unknown", "unknown", "Added@1 Deleted?@1"},
		{"known then known keeps the newer", "known", "known", "Added@1 Deleted@3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cache{}
			f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
			require.NoError(t, f.Add(cm("a", "1")))
			deleteAs(t, f, tc.known, cm("a", "2"))
			deleteAs(t, f, tc.then, cm("a", "3"))
			assert.Equal(t, tc.want, popOne(t, f, nil).Deltas)
		})
	}
}

// deleteAs queues a delete whose final state is known (Delete of obj) or
// unknown (a Replace that no longer lists the queued key; its tombstone
// carries the newest queued state, not obj).
func deleteAs(t *testing.T, f *fifo, how string, obj *corev1.ConfigMap) {
	t.Helper()
	if how == "known" {
		require.NoError(t, f.Delete(obj))
		return
	}
	require.NoError(t, f.Replace(nil, "99"))
}

func TestDeleteOfAKeyNobodyKnowsIsIgnored(t *testing.T) {
	c := cache{key("known"): cm("known", "1")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Delete(cm("stranger", "5")))
	assert.Zero(t, f.Len(), "neither queued nor known: nothing to tell anyone")

	require.NoError(t, f.Delete(cm("known", "2")))
	assert.Equal(t, popped{"default/known", "Deleted@2", false}, popOne(t, f, nil))
}

func TestReplaceQueuesReplacedForEveryListedObject(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "2")}, "2"))
	assert.Equal(t, []popped{
		{"default/a", "Replaced@1", true},
		{"default/b", "Replaced@2", true},
	}, popAll(t, f, nil))
}

func TestReplaceTombstonesCachedKeysMissingFromTheListWithTheirLastKnownState(t *testing.T) {
	c := cache{key("kept"): cm("kept", "1"), key("gone"): cm("gone", "2")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("kept", "5")}, "5"))
	got := popAll(t, f, c)
	assert.ElementsMatch(t, []popped{
		{"default/kept", "Replaced@5", true},
		{"default/gone", "Deleted?@2", true},
	}, got)
	assert.NotContains(t, c, key("gone"))
}

// The case client-go once missed (kubernetes#115658): an object queued but
// not yet popped, then gone from the next list.
func TestReplaceTombstonesQueuedKeysMissingFromTheList(t *testing.T) {
	c := cache{}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Replace(nil, "1"))
	require.NoError(t, f.Add(cm("brief", "2"))) // queued, never reached the cache
	require.NoError(t, f.Replace(nil, "3"))
	assert.Equal(t, popped{"default/brief", "Added@2 Deleted?@2", false}, popOne(t, f, c))
	assert.Empty(t, c, "the consumer never keeps an object the server no longer has")
}

func TestReplaceTombstoneCarriesTheNewestQueuedStateRatherThanTheCachedOne(t *testing.T) {
	c := cache{key("a"): cm("a", "1")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Update(cm("a", "2")))
	require.NoError(t, f.Replace(nil, "3"))
	assert.Equal(t, "Updated@2 Deleted?@2", popOne(t, f, c).Deltas)
}

func TestReplaceWithOneBadObjectQueuesNothing(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	err := f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("", "2")}, "2")
	require.ErrorContains(t, err, "item 1")
	assert.Zero(t, f.Len())
	assert.False(t, f.HasSynced(), "a failed Replace does not count as the first list")
}

func TestResyncReplaysOnlyCachedKeysWithNothingQueued(t *testing.T) {
	c := cache{key("idle"): cm("idle", "1"), key("busy"): cm("busy", "2")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Update(cm("busy", "3")))
	require.NoError(t, f.Resync())
	assert.ElementsMatch(t, []popped{
		{"default/busy", "Updated@3", false},
		{"default/idle", "Sync@1", false},
	}, popAll(t, f, c))
}

// TestEachDeltaCarriesTheNumberOfResyncsBegunWhenItWasQueued: a Sync
// delta carries the number of the resync that queued it, any other delta
// how many had begun, so a consumer can tell that a key queued before a
// resync was skipped by it.
func TestEachDeltaCarriesTheNumberOfResyncsBegunWhenItWasQueued(t *testing.T) {
	c := cache{key("idle"): cm("idle", "1"), key("busy"): cm("busy", "2")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Update(cm("busy", "3"))) // queued before resync 1: skipped by it
	require.NoError(t, f.Resync())                // 1: a Sync for idle
	require.NoError(t, f.Resync())                // 2: skips both, queued
	require.NoError(t, f.Update(cm("busy", "4")))
	assert.Equal(t, uint64(2), f.Resyncs())
	got := map[string][]uint64{}
	for f.Len() > 0 {
		require.NoError(t, f.Pop(context.Background(), func(k informer.Key, d deltafifo.Deltas[*corev1.ConfigMap], _ bool) error {
			for _, delta := range d {
				got[k.Name] = append(got[k.Name], delta.Resyncs)
			}
			c.apply(k, d)
			return nil
		}))
	}
	assert.Equal(t, map[string][]uint64{"busy": {0, 2}, "idle": {1}}, got)
}

func TestResyncWithoutKnownObjectsDoesNothing(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Resync())
	assert.Zero(t, f.Len())
}

func TestNewRefusesANilIndexerAsKnownObjectsInsteadOfPanickingLater(t *testing.T) {
	var cache *indexer.Indexer[*corev1.ConfigMap] // an indexer.New whose error was ignored
	f, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache})
	assert.Nil(t, f)
	assert.ErrorContains(t, err, "Options.KnownObjects is a nil *indexer.Indexer")
}
