package sharedinformer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// uidRecorder records each call with the UIDs involved.
type uidRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *uidRecorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }
func (r *uidRecorder) OnAdd(obj *corev1.ConfigMap, _ bool) {
	r.add("add " + string(obj.UID))
}
func (r *uidRecorder) OnUpdate(old, obj *corev1.ConfigMap) {
	r.add("update " + string(old.UID) + "->" + string(obj.UID))
}
func (r *uidRecorder) OnDelete(obj *corev1.ConfigMap, unknown bool) {
	if unknown {
		r.add("delete " + string(obj.UID) + " (final state unknown)")
		return
	}
	r.add("delete " + string(obj.UID))
}
func (r *uidRecorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// The package's guarantee (doc.go): "A deletion the watch missed (found
// by a relist) reaches every handler as OnDelete(lastKnown,
// finalStateUnknown=true)". An object deleted and made again under the
// same name while the watch was down is such a deletion: uid-1 is gone.
// The relist finds uid-2 under the key; handlers must hear uid-1's
// delete (a controller counting deletions with package expectations
// calls DeletionObserved there), not an update from one object to
// another.
func TestADeletionTheWatchMissedBehindARecreatedNameReachesHandlersAsADelete(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	rec := &uidRecorder{}
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	a := configMap("a")
	a.UID = "uid-1"
	_, err = lw.Create(a)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, reg)

	key := informer.Key{Namespace: "default", Name: "a"}
	lw.Disconnect()
	require.NoError(t, lw.Delete(key))
	again := configMap("a")
	again.UID = "uid-2"
	_, err = lw.Create(again)
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()

	// A marker after the relist: once the handler has it, it has had
	// everything the relist told.
	marker := configMap("marker")
	marker.UID = "uid-m"
	_, err = lw.Create(marker)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, inf.WaitFor(ctx, lw.ResourceVersion()))
	require.Eventually(t, func() bool {
		calls := rec.snapshot()
		return len(calls) > 0 && calls[len(calls)-1] == "add uid-m"
	}, hangGuard, 5*time.Millisecond, "the marker never reached the handler: %q", rec.snapshot())

	require.Contains(t, rec.snapshot(), "delete uid-1 (final state unknown)",
		"uid-1 was deleted while the watch was down and the relist found it gone (another object holds its name), but no handler heard of its delete: %q", rec.snapshot())
}

// The predicates "pass every delete" (predicates.go: dropping a delete
// strands what the reconcile made for the object). A relist that finds
// an object deleted and made again under its name tells handlers an
// update from one UID to the other, and GenerationChanged compares the
// generations of two different objects, both 1: the filtered handler
// hears neither that uid-1 went away nor that uid-2 exists.
func TestAGenerationChangedHandlerHearsOfAnObjectARelistFoundDeletedAndMadeAgain(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	rec := &uidRecorder{}
	reg, err := inf.AddEventHandler(sharedinformer.Filtered[*corev1.ConfigMap](rec, sharedinformer.GenerationChanged[*corev1.ConfigMap]()))
	require.NoError(t, err)
	a := configMap("a")
	a.UID, a.Generation = "uid-1", 1
	_, err = lw.Create(a)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, reg)

	lw.Disconnect()
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "a"}))
	again := configMap("a")
	again.UID, again.Generation = "uid-2", 1
	_, err = lw.Create(again)
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()

	marker := configMap("marker")
	marker.UID = "uid-m"
	_, err = lw.Create(marker)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		calls := rec.snapshot()
		return len(calls) > 0 && calls[len(calls)-1] == "add uid-m"
	}, hangGuard, 5*time.Millisecond, "the marker never reached the handler: %q", rec.snapshot())

	calls := rec.snapshot()
	require.Greater(t, len(calls), 2,
		"the filtered handler heard nothing of uid-1's delete nor of uid-2 (only %q): the relist's delete-and-create came as one update, which GenerationChanged dropped", calls)
}
