package deltafifo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/deltafifo"
)

func TestAListInPartsTombstonesOnlyTheKeysNoPartListed(t *testing.T) {
	c := cache{key("a"): cm("a", "1"), key("gone"): cm("gone", "2"), key("c"): cm("c", "3")}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "7")}))
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("c", "8"), cm("new", "9")}))
	require.NoError(t, f.FinishReplace("9"))
	assert.Equal(t, []popped{
		{"default/a", "Replaced@7", true},
		{"default/c", "Replaced@8", true},
		{"default/new", "Replaced@9", true},
		{"default/gone", "Deleted?@2", true},
	}, popAll(t, f, c))
	assert.NotContains(t, c, key("gone"))
	assert.Equal(t, "9", f.AppliedResourceVersion())
}

// The point of parts: a part is in the cache, its old versions garbage,
// before the next is read; and what a reader of the cache sees meanwhile
// never lacks a key both the old cache and the list hold.
func TestAPartReachesTheCacheBeforeTheListEnds(t *testing.T) {
	c := cache{}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "1")}, "1"))
	popAll(t, f, c)
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "5")}))
	assert.Equal(t, popped{"default/a", "Replaced@5", false}, popOne(t, f, c))
	assert.Equal(t, "5", c[key("a")].ResourceVersion, "the first part is applied while the list is still being read")
	assert.Contains(t, c, key("b"), "a key not yet listed stays in the cache until the list ends")
	assert.Equal(t, "1", f.AppliedResourceVersion(), "the list's resourceVersion is not applied before the list ends")

	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("b", "5")}))
	require.NoError(t, f.FinishReplace("5"))
	popAll(t, f, c)
	assert.Equal(t, "5", f.AppliedResourceVersion())
	assert.Len(t, c, 2)
}

func TestAListThatNeverFinishesDeletesNothing(t *testing.T) {
	c := cache{}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("a", "1"), cm("b", "1")}, "1"))
	popAll(t, f, c)
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "5")}))
	// The connection is cut here, before b was read: no tombstone for b.
	assert.Equal(t, []popped{{"default/a", "Replaced@5", false}}, popAll(t, f, c))
	assert.Len(t, c, 2)
	assert.Equal(t, "1", f.AppliedResourceVersion())

	// The reflector lists again from the start; this list finishes.
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("b", "6")}))
	require.NoError(t, f.FinishReplace("6"))
	assert.Equal(t, []popped{
		{"default/b", "Replaced@6", false},
		{"default/a", "Deleted?@5", false},
	}, popAll(t, f, c), "a finished list decides what is gone, not the one cut short")
	assert.Equal(t, "6", f.AppliedResourceVersion())
}

func TestPartsOfTheFirstListAreTheInitialList(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "1")}))
	assert.Equal(t, popped{"default/a", "Replaced@1", true}, popOne(t, f, nil))
	assert.False(t, f.HasSynced(), "synced only once the whole first list is in and popped")
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("b", "2")}))
	require.NoError(t, f.FinishReplace("2"))
	assert.False(t, f.HasSynced())
	assert.Equal(t, popped{"default/b", "Replaced@2", true}, popOne(t, f, nil))
	assert.True(t, f.HasSynced())
}

func TestAPartWithOneBadObjectQueuesNothingOfThatPart(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	require.NoError(t, f.BeginReplace())
	err := f.ReplacePart([]*corev1.ConfigMap{cm("a", "1"), nil})
	require.ErrorContains(t, err, "ReplacePart: item 1")
	assert.Zero(t, f.Len())
}

func TestAPartWithNoReplacementBegunIsAnError(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: cache{}})
	require.ErrorIs(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "1")}), deltafifo.ErrNoReplacement)
	require.ErrorIs(t, f.FinishReplace("1"), deltafifo.ErrNoReplacement)
	require.NoError(t, f.Replace(nil, "1"))
	require.ErrorIs(t, f.FinishReplace("2"), deltafifo.ErrNoReplacement, "Replace leaves no replacement open")
	assert.Zero(t, f.Len())
}

// A collection that is gone before its first list finished: Empty deletes
// what the cut list queued or cached, and is no list, so HasSynced stays
// false.
func TestEmptyDeletesACutFirstListAndIsNotASync(t *testing.T) {
	c := cache{}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.BeginReplace())
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("a", "1")}))
	assert.Equal(t, popped{"default/a", "Replaced@1", true}, popOne(t, f, c))
	require.NoError(t, f.ReplacePart([]*corev1.ConfigMap{cm("b", "1")}))

	require.NoError(t, f.Empty())
	assert.Equal(t, []popped{
		{"default/b", "Replaced@1 Deleted?@1", false},
		{"default/a", "Deleted?@1", false},
	}, popAll(t, f, c))
	assert.Empty(t, c)
	assert.False(t, f.HasSynced(), "Empty is not a list")
	assert.ErrorIs(t, f.FinishReplace("2"), deltafifo.ErrNoReplacement, "the cut list is forgotten")
}
