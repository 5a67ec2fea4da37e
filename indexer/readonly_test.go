package indexer

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

func TestTheReadOnlyViewSeesEveryWrite(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	view := idx.ReadOnly()
	require.NoError(t, idx.Add(cm("shop", "a", "app", "web")))

	got, ok := view.Get(informer.Key{Namespace: "shop", Name: "a"})
	require.True(t, ok)
	assert.Equal(t, "a", got.Name)
	assert.Equal(t, 1, view.Len())
	web := must(view.ByIndex("app", "web"))
	assert.Len(t, web, 1)

	require.NoError(t, idx.Delete(got))
	assert.Zero(t, view.Len())
	assert.Empty(t, view.List())
}

func TestTheReadOnlyViewHasNoMethodThatWrites(t *testing.T) {
	typ := reflect.TypeFor[ReadOnly[*corev1.ConfigMap]]()
	for _, write := range []string{"Add", "Update", "Delete", "Replace", "AddIndexers"} {
		_, found := typ.MethodByName(write)
		assert.False(t, found, "ReadOnly has %s", write)
	}
	reads := 0
	for m := range reflect.TypeFor[*Indexer[*corev1.ConfigMap]]().Methods() {
		if _, ok := typ.MethodByName(m.Name); ok {
			reads++
		}
	}
	assert.Equal(t, typ.NumMethod(), reads, "every method of the view is one of the Indexer's")
}
