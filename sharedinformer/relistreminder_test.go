package sharedinformer_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// TestARelistLongAfterAResyncTellsNoHandlerOfAnObjectThatDidNotChange:
// a relisted object whose resourceVersion and UID did not change reaches
// only the handlers whose resync the pop answers, and here none does
// (docs/06: a relist gives "nothing for what did not change"). The
// handler "reminded" (period 1s) is resynced once at t=1s; the fake
// clock then stands still, so it is never due again; a watch outage and
// a compaction force a relist that finds "a" unchanged. Before resyncs
// were numbered, the handlers of the latest resync stayed due until the
// next one, and "reminded" heard of "a" again, as OnUpdate(old, new)
// with two objects at one resourceVersion.
func TestARelistLongAfterAResyncTellsNoHandlerOfAnObjectThatDidNotChange(t *testing.T) {
	clock := workqueue.NewFakeClock(time.Unix(1_000_000, 0))
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Clock: clock})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)

	var mu sync.Mutex
	var calls []string
	record := func(s string) { mu.Lock(); defer mu.Unlock(); calls = append(calls, s) }
	snapshot := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), calls...) }
	_, err = inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(obj *corev1.ConfigMap, initial bool) { record("add " + obj.Name) },
		UpdateFunc: func(old, obj *corev1.ConfigMap) {
			if old == obj {
				record("resync " + obj.Name)
			} else {
				record("update " + obj.Name + " rv " + old.ResourceVersion + "->" + obj.ResourceVersion)
			}
		},
		DeleteFunc: func(obj *corev1.ConfigMap, _ bool) { record("delete " + obj.Name) },
	}, sharedinformer.HandlerOptions{Name: "reminded", ResyncPeriod: time.Second})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	stepResync(t, clock, time.Second, func() bool { return len(snapshot()) == 2 }, "the t=1s resync never came")
	require.Equal(t, []string{"add a", "resync a"}, snapshot())

	// The clock stands still from here: no handler is due again. A
	// watch outage, and history compacted meanwhile: 410, relist.
	lw.Disconnect()
	_, err = lw.Create(configMap("fence")) // the relist that shows it has been applied
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	require.Eventually(t, func() bool {
		s := snapshot()
		return len(s) > 0 && s[len(s)-1] == "add fence"
	}, hangGuard, time.Millisecond, "the relist never reached the handler: %q", snapshot())
	assert.Equal(t, []string{"add a", "resync a", "add fence"}, snapshot(),
		"a did not change, and no resync was due: the relist should tell the handler nothing of it")
}
