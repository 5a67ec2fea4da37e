package indexer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

func TestCheckMutationsIsNilWhenNobodyModifiedTheCache(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), DetectMutations: true}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	require.NoError(t, idx.Update(cm("default", "a", "app", "db")))
	require.NoError(t, idx.Replace([]*corev1.ConfigMap{cm("default", "b"), cm("prod", "c")}))
	require.NoError(t, idx.Delete(cm("prod", "c")))

	// Reading, and changing a deep copy, is fine.
	for _, obj := range idx.List() {
		mine := obj.DeepCopy()
		mine.Data = map[string]string{"changed": "on my copy"}
	}
	assert.NoError(t, idx.CheckMutations())
}

func TestCheckMutationsNamesEveryKeyAReaderModifiedInPlace(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), DetectMutations: true}))
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, idx.Add(cm("default", name, "app", "web")))
	}
	require.NoError(t, idx.Add(cm("prod", "a")))

	// Two readers make the pitfall-2 mistake: they change what the cache
	// gave them instead of a copy.
	listed, err := idx.ByIndex("app", "web")
	require.NoError(t, err)
	for _, obj := range listed {
		if obj.Name == "c" {
			obj.Data = map[string]string{"oops": "in place"}
		}
	}
	got, _ := idx.Get(key("prod", "a"))
	got.Labels = map[string]string{"oops": "in place"}

	err = idx.CheckMutations()
	var mutation *MutationError
	require.ErrorAs(t, err, &mutation)
	assert.Equal(t, []informer.Key{key("default", "c"), key("prod", "a")}, mutation.Keys, "sorted by namespace, then name")
	assert.ErrorContains(t, err, "2 cached object(s) were modified in place")
	assert.ErrorContains(t, err, "default/c, prod/a")

	// Storing a fresh object for a key takes a fresh copy: that key is
	// clean again.
	require.NoError(t, idx.Update(cm("default", "c", "app", "web")))
	err = idx.CheckMutations()
	require.ErrorAs(t, err, &mutation)
	assert.Equal(t, []informer.Key{key("prod", "a")}, mutation.Keys)
}

func TestCheckMutationsSaysWhenTheDetectorIsOff(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	err := idx.CheckMutations()
	assert.True(t, errors.Is(err, ErrMutationDetectorOff))
	assert.ErrorContains(t, err, "mutation detector is off")
	assert.ErrorContains(t, err, "DetectMutations")
}
