package indexer

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
)

// A trace hook runs inside a write, under the lock. One that panics (a
// bug in a metrics collector, say) stops that write's events, but not
// the write half-way: the write is applied whole before any event is
// emitted, so every index stays exact. Before, a hook that panicked on
// KindStored left the key filed under its old values, on KindDeleted
// left a removed key filed (ByIndex returned a nil object for it), and on
// AddIndexers' first KindIndexAdded left the next index installed but
// never again updated by a write.
func TestATraceHookThatPanicsLeavesEveryIndexExact(t *testing.T) {
	panicking := false
	hook := func(informer.TraceEvent) {
		if panicking {
			panic("a broken trace hook")
		}
	}
	write := func(f func()) {
		t.Helper()
		panicking = true
		defer func() { panicking = false }()
		require.PanicsWithValue(t, "a broken trace hook", f)
	}
	idx, err := New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), Trace: hook})
	require.NoError(t, err)
	require.NoError(t, idx.Add(cm("ns", "a", "app", "web")))
	require.NoError(t, idx.Add(cm("ns", "b", "app", "web")))

	write(func() { _ = idx.Update(cm("ns", "a", "app", "db")) })
	web, err := idx.IndexKeys("app", "web")
	require.NoError(t, err)
	require.ElementsMatch(t, []informer.Key{key("ns", "b")}, web, "a is labelled app=db now")

	write(func() { _ = idx.Delete(cm("ns", "b")) })
	objs, err := idx.ByIndex("app", "web")
	require.NoError(t, err)
	require.Empty(t, objs, "b is deleted")

	write(func() {
		_ = idx.AddIndexers(map[string]IndexFunc[*corev1.ConfigMap]{
			"x": LabelIndexFunc[*corev1.ConfigMap]("x"),
			"y": LabelIndexFunc[*corev1.ConfigMap]("y"),
		})
	})
	require.NoError(t, idx.Add(cm("ns", "c", "x", "1", "y", "2")))
	for name, value := range map[string]string{"x": "1", "y": "2"} {
		keys, err := idx.IndexKeys(name, value)
		require.NoError(t, err)
		require.ElementsMatch(t, []informer.Key{key("ns", "c")}, keys, "index %s", name)
	}
}

// The package doc says a write emits its events once it is applied
// whole; Replace emitted KindReplaced before it swapped in the new
// content, so a hook that panicked on it left the old content in place:
// the one write a panicking hook undid, where Add, Update, Delete and
// AddIndexers are applied. Passing: after the panic the Indexer holds
// the objects Replace was given, in the store and in every index.
func TestATraceHookThatPanicsOnReplacedLeavesTheReplaceApplied(t *testing.T) {
	panicking := false
	hook := func(e informer.TraceEvent) {
		if panicking && e.Kind == KindReplaced {
			panic("a broken trace hook")
		}
	}
	idx, err := New(Options[*corev1.ConfigMap]{Indexers: standardIndexers(), Trace: hook})
	require.NoError(t, err)
	require.NoError(t, idx.Add(cm("ns", "a", "app", "web")))

	panicking = true
	require.PanicsWithValue(t, "a broken trace hook", func() {
		_ = idx.Replace([]*corev1.ConfigMap{cm("ns", "b", "app", "db")})
	})
	panicking = false
	_, ok := idx.Get(key("ns", "a"))
	require.False(t, ok, "a is not in what Replace was given")
	db, err := idx.IndexKeys("app", "db")
	require.NoError(t, err)
	require.ElementsMatch(t, []informer.Key{key("ns", "b")}, db, "b is labelled app=db")
}
