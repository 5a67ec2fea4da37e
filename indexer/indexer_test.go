package indexer

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

func TestGetReturnsTheStoredObjectItself(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	a := cm("default", "a")
	require.NoError(t, idx.Add(a))

	got, ok := idx.Get(key("default", "a"))
	require.True(t, ok)
	assert.Same(t, a, got, "the cache shares the object; it does not copy it")

	_, ok = idx.Get(key("other", "a"))
	assert.False(t, ok, "the namespace is part of the key")
}

func TestAddAndUpdateAreTheSameUpsert(t *testing.T) {
	for _, write := range []string{"Add", "Update"} {
		t.Run(write, func(t *testing.T) {
			idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
			do := idx.Add
			if write == "Update" {
				do = idx.Update
			}
			require.NoError(t, do(cm("default", "a", "app", "web")), "a new key is stored")
			newer := cm("default", "a", "app", "db")
			require.NoError(t, do(newer), "an existing key is replaced")

			got, _ := idx.Get(key("default", "a"))
			assert.Same(t, newer, got)
			assert.Equal(t, 1, idx.Len())
			requireExact(t, idx)
		})
	}
}

// The table walks one key through the life of an object and states the
// exact content of the "app" index after each write.
func TestWritesKeepTheIndexExact(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "other", "app", "web")))
	for _, step := range []struct {
		what  string
		write func() error
		want  map[string][]informer.Key // app value → keys
	}{
		{"add files the key under its value",
			func() error { return idx.Add(cm("default", "a", "app", "web")) },
			map[string][]informer.Key{"web": {key("default", "a"), key("default", "other")}}},
		{"an update that changes the value moves the key",
			func() error { return idx.Update(cm("default", "a", "app", "db")) },
			map[string][]informer.Key{"web": {key("default", "other")}, "db": {key("default", "a")}}},
		{"an update that keeps the value changes nothing",
			func() error { return idx.Update(cm("default", "a", "app", "db", "tier", "1")) },
			map[string][]informer.Key{"web": {key("default", "other")}, "db": {key("default", "a")}}},
		{"an update that drops the label takes the key out; the empty value goes",
			func() error { return idx.Update(cm("default", "a")) },
			map[string][]informer.Key{"web": {key("default", "other")}}},
		{"an update that adds the label files the key again",
			func() error { return idx.Update(cm("default", "a", "app", "web")) },
			map[string][]informer.Key{"web": {key("default", "a"), key("default", "other")}}},
		{"delete takes the key out of every value",
			func() error { return idx.Delete(cm("default", "a")) },
			map[string][]informer.Key{"web": {key("default", "other")}}},
		{"deleting the last key of a value deletes the value",
			func() error { return idx.Delete(cm("default", "other")) },
			map[string][]informer.Key{}},
	} {
		require.NoError(t, step.write(), step.what)
		assert.Equal(t, step.want, stateOf(t, idx).Indices["app"], step.what)
		requireExact(t, idx)
	}
}

func TestDeletingAnAbsentKeyIsNotAnError(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "a")))
	require.NoError(t, idx.Delete(cm("default", "never-stored")))
	assert.Equal(t, 1, idx.Len())
}

func TestDeleteUsesOnlyTheKeyOfItsArgument(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	// The delete carries a different (say, older) body with another label.
	require.NoError(t, idx.Delete(cm("default", "a", "app", "db")))
	assert.Zero(t, idx.Len())
	requireExact(t, idx)
}

func TestReadsReturnFreshSlicesOfSharedObjects(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	a, b := cm("default", "a", "app", "web"), cm("default", "b", "app", "web")
	require.NoError(t, idx.Add(a))
	require.NoError(t, idx.Add(b))

	list := idx.List()
	list[0], list[1] = nil, nil // the slice is ours to change...
	assert.ElementsMatch(t, []*corev1.ConfigMap{a, b}, idx.List(), "...and changing it does not touch the cache")

	keys := idx.ListKeys()
	keys[0] = key("x", "y")
	assert.ElementsMatch(t, []informer.Key{key("default", "a"), key("default", "b")}, idx.ListKeys())

	web, err := idx.ByIndex("app", "web")
	require.NoError(t, err)
	web[0] = nil
	web, _ = idx.ByIndex("app", "web")
	assert.ElementsMatch(t, []*corev1.ConfigMap{a, b}, web)

	// ElementsMatch compares contents; the objects must be the very ones
	// stored, not copies.
	for _, obj := range slices.Concat(idx.List(), web, idx.Namespace("default")) {
		assert.True(t, obj == a || obj == b, "reads return the cached objects themselves")
	}
}

func TestByIndexOfAValueNoObjectHasIsEmpty(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	objs, err := idx.ByIndex("app", "db")
	require.NoError(t, err)
	assert.Empty(t, objs)
	keys, err := idx.IndexKeys("app", "db")
	require.NoError(t, err)
	assert.Empty(t, keys)
}

func TestIndexValuesListsOnlyValuesThatHaveObjects(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	require.NoError(t, idx.Add(cm("kube-system", "b", "app", "dns")))
	require.NoError(t, idx.Add(cm("", "c"))) // cluster-scoped, no app label
	require.NoError(t, idx.Delete(cm("kube-system", "b")))

	apps, err := idx.IndexValues("app")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"web"}, apps)
	namespaces, err := idx.IndexValues(NamespaceIndex)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"default", ""}, namespaces, "a cluster-scoped object is filed under \"\"")
}

func TestNamespaceIndexFuncFilesEveryObjectUnderItsNamespace(t *testing.T) {
	for _, tc := range []struct {
		obj  *corev1.ConfigMap
		want []string
	}{
		{cm("default", "a"), []string{"default"}},
		{cm("", "cluster-scoped"), []string{""}},
	} {
		got, err := NamespaceIndexFunc(tc.obj)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.obj.Name)
	}
}

func TestLabelIndexFuncFilesUnderTheLabelValueOrNothing(t *testing.T) {
	app := LabelIndexFunc[*corev1.ConfigMap]("app")
	for _, tc := range []struct {
		what string
		obj  *corev1.ConfigMap
		want []string
	}{
		{"label set", cm("ns", "a", "app", "web"), []string{"web"}},
		{"label present but empty", cm("ns", "a", "app", ""), []string{""}},
		{"label absent", cm("ns", "a", "tier", "web"), nil},
		{"no labels at all", cm("ns", "a"), nil},
	} {
		got, err := app(tc.obj)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.what)
	}
}

func TestAnIndexFuncMayReturnSeveralValuesDuplicatesCountOnce(t *testing.T) {
	// Files each object under every label value it has, unsorted, with
	// duplicates.
	everyValue := func(obj *corev1.ConfigMap) ([]string, error) {
		var out []string
		for _, v := range obj.Labels {
			out = append(out, v, v)
		}
		return out, nil
	}
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: map[string]IndexFunc[*corev1.ConfigMap]{"values": everyValue}}))
	require.NoError(t, idx.Add(cm("ns", "a", "x", "red", "y", "blue", "z", "red")))
	values, err := idx.IndexValues("values")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"red", "blue"}, values)
	keys, _ := idx.IndexKeys("values", "red")
	assert.Equal(t, []informer.Key{key("ns", "a")}, keys)
	requireExact(t, idx)

	require.NoError(t, idx.Update(cm("ns", "a", "x", "blue")))
	values, _ = idx.IndexValues("values")
	assert.Equal(t, []string{"blue"}, values, "red had no other key, so it is gone")
	requireExact(t, idx)
}

func TestReplaceSwapsTheWholeContentAndRebuildsEveryIndex(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "gone", "app", "old")))
	require.NoError(t, idx.Add(cm("default", "kept", "app", "web")))

	kept := cm("default", "kept", "app", "db")
	require.NoError(t, idx.Replace([]*corev1.ConfigMap{kept, cm("prod", "new", "app", "web")}))

	assert.ElementsMatch(t, []informer.Key{key("default", "kept"), key("prod", "new")}, idx.ListKeys())
	got, _ := idx.Get(key("default", "kept"))
	assert.Same(t, kept, got)
	apps, _ := idx.IndexValues("app")
	assert.ElementsMatch(t, []string{"db", "web"}, apps, "the value of the dropped object is gone")
	requireExact(t, idx)

	require.NoError(t, idx.Replace(nil))
	assert.Zero(t, idx.Len())
	requireExact(t, idx)
}

func TestAddIndexersBuildsNewIndicesFromStoredObjects(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	require.NoError(t, idx.Add(cm("prod", "b", "app", "web")))
	assert.False(t, idx.HasIndex("app"))

	require.NoError(t, idx.AddIndexers(standardIndexers()))
	assert.True(t, idx.HasIndex("app"))
	assert.True(t, idx.HasIndex(NamespaceIndex))
	keys, err := idx.IndexKeys("app", "web")
	require.NoError(t, err)
	assert.ElementsMatch(t, []informer.Key{key("default", "a"), key("prod", "b")}, keys)
	requireExact(t, idx)

	require.NoError(t, idx.AddIndexers(nil), "adding no index is a no-op")
}

// Pitfall 2 from the index's side: a reader changed a cached object's
// labels in place. The index remembers what it filed the key under, so the
// next real update still moves the key correctly; recomputing the old
// values from the (mutated) stored object would have left the key under
// "web" forever.
func TestAnIndexStaysExactEvenIfACachedObjectWasMutatedInPlace(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: standardIndexers()}))
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))

	cached, _ := idx.Get(key("default", "a"))
	cached.Labels["app"] = "hacked" // the bug this test survives

	require.NoError(t, idx.Update(cm("default", "a", "app", "db")))
	apps, _ := idx.IndexValues("app")
	assert.Equal(t, []string{"db"}, apps, "no stale key left under web, nothing under hacked")
	requireExact(t, idx)
}

func TestIndexFuncResultIsNotRetainedBeyondTheCall(t *testing.T) {
	shared := []string{"b", "a"} // an IndexFunc that returns the same slice every time
	idx := must(New(Options[*corev1.ConfigMap]{Indexers: map[string]IndexFunc[*corev1.ConfigMap]{
		"shared": func(*corev1.ConfigMap) ([]string, error) { return shared, nil },
	}}))
	require.NoError(t, idx.Add(cm("ns", "a")))
	assert.Equal(t, []string{"b", "a"}, shared, "the Indexer sorts its own copy, not the caller's slice")
	idx.mu.RLock()
	assert.Equal(t, []string{"a", "b"}, idx.indices["shared"].byKey[key("ns", "a")])
	idx.mu.RUnlock()
}

// client-go files every key twice: in its store, and again in a namespace
// index. Here the store is laid out by namespace, so each key is filed
// once, in its namespace's space, and the namespace index is that layout:
// no index holds the keys a second time, with other indices or without.
func TestEachKeyIsFiledOnceTheNamespaceIndexIsTheLayout(t *testing.T) {
	for _, indexers := range []map[string]IndexFunc[*corev1.ConfigMap]{nil, standardIndexers()} {
		idx := must(New(Options[*corev1.ConfigMap]{Indexers: indexers}))
		for _, k := range []informer.Key{key("a", "1"), key("a", "2"), key("b", "1"), key("", "node-1")} {
			require.NoError(t, idx.Add(cm(k.Namespace, k.Name, "app", "web")))
		}
		idx.mu.RLock()
		filed := map[string]int{}
		for ns, sp := range idx.spaces {
			filed[ns] = len(sp.pos)
		}
		registered := slices.Collect(maps.Keys(idx.indices))
		idx.mu.RUnlock()
		assert.Equal(t, map[string]int{"a": 2, "b": 1, "": 1}, filed, "each key once, in its namespace's space")
		assert.ElementsMatch(t, slices.Collect(maps.Keys(indexers)), registered, "no index beyond those asked for: none files the keys by namespace")
		inA, err := idx.ByIndex(NamespaceIndex, "a")
		require.NoError(t, err)
		assert.Len(t, inA, 2, "the namespace index answers from the layout")
	}
}

func TestTheNamespaceIndexIsBuiltInAndCannotBeRegistered(t *testing.T) {
	_, err := New(Options[*corev1.ConfigMap]{Indexers: map[string]IndexFunc[*corev1.ConfigMap]{NamespaceIndex: NamespaceIndexFunc[*corev1.ConfigMap]}})
	assert.ErrorContains(t, err, `the index "namespace" is built in`)

	idx := must(New(Options[*corev1.ConfigMap]{}))
	assert.ErrorContains(t, idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{NamespaceIndex: NamespaceIndexFunc[*corev1.ConfigMap]}), "built in")
	require.NoError(t, idx.Add(cm("default", "a", "app", "web")))
	require.NoError(t, idx.Add(cm("prod", "b", "app", "web")))
	require.NoError(t, idx.Add(cm("", "node-1", "app", "web")))
	assert.True(t, idx.HasIndex(NamespaceIndex), "with no index registered")
	prod, err := idx.ByIndex(NamespaceIndex, "prod")
	require.NoError(t, err)
	assert.Len(t, prod, 1)
	values, err := idx.IndexValues(NamespaceIndex)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"default", "prod", ""}, values, "cluster-scoped objects are under \"\"")
	none, err := idx.ByIndex(NamespaceIndex, "absent")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestANamespaceListIsACopyThatLaterWritesDoNotChange(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, idx.Add(cm("default", name, "app", "web")))
	}
	listed, err := idx.ByIndex(NamespaceIndex, "default")
	require.NoError(t, err)
	require.NoError(t, idx.Delete(cm("default", "a", "", ""))) // moves the last object into a's slot
	require.NoError(t, idx.Add(cm("default", "d", "app", "web")))
	names := []string{}
	for _, obj := range listed {
		names = append(names, obj.Name)
	}
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names, "the slice handed out is the reader's own")
	requireExact(t, idx)
}

func TestAReaderRenamingACachedObjectCannotCorruptTheLayout(t *testing.T) {
	idx := must(New(Options[*corev1.ConfigMap]{}))
	a, b := cm("default", "a", "", ""), cm("default", "b", "", "")
	require.NoError(t, idx.Add(a))
	require.NoError(t, idx.Add(b))
	b.Name = "renamed-in-place" // pitfall 2, done on purpose
	require.NoError(t, idx.Delete(cm("default", "a", "", "")))
	got, ok := idx.Get(key("default", "b"))
	assert.True(t, ok, "b is still found under the name it was stored with")
	assert.Same(t, b, got)
}
