package sharedinformer

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// liveHeap is the live heap after two full collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// ownedAt is a ConfigMap of a ReplicaSet of its own, written at a second
// of its own: an owner name, owner UID, generateName and managedFields
// time that no other object repeats (pods of many short-lived owners:
// Jobs, rollouts), 345 bytes the interner counts toward its budget (89
// of values, a time's 32, four map slots).
func ownedAt(i int) *corev1.ConfigMap {
	rs := fmt.Sprintf("rs-%07d", i)
	at := metav1.NewTime(time.Unix(1_700_000_000+int64(i), 0))
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: rs + "-x", GenerateName: rs + "-",
		OwnerReferences: []metav1.OwnerReference{{Name: rs, UID: types.UID(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i))}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Time: &at}},
	}}
}

// TestWhatTheInternerHoldsBeyondTheCacheIsAboutItsBudget proves the bound
// intern.go promises: "what the interner holds beyond what the cache
// holds anyway is at most about internBudget". Objects that repeat
// nothing are shared until just before the table would start afresh; the
// objects stay alive (the cache holds them anyway), so the heap's growth
// is what the interner alone holds: its map entries above all, which
// cost more than short values themselves. (The review that wrote it
// found the table counting the values' bytes only, and holding 3.13×
// internBudget.)
func TestWhatTheInternerHoldsBeyondTheCacheIsAboutItsBudget(t *testing.T) {
	per := len("rs-0000000") + len("rs-0000000-") + 36 + 32 + 4*entryBytes
	n := (internBudget - len("default") - entryBytes) / per
	objs := make([]*corev1.ConfigMap, n)
	for i := range objs {
		objs[i] = ownedAt(i)
	}
	var in interner
	before := liveHeap()
	for _, obj := range objs {
		in.share(obj)
	}
	require.Equal(t, n*per+len("default")+entryBytes, in.bytes, "the table started afresh: the test's count of bytes is off")
	grew := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(objs)
	runtime.KeepAlive(&in)
	t.Logf("the interner counts %d bytes and holds %d beyond the objects (%.2f× internBudget)", in.bytes, grew, float64(grew)/internBudget)
	require.LessOrEqual(t, grew, int64(internBudget*3/2),
		"the interner holds %.2f× internBudget beyond what the objects hold", float64(grew)/internBudget)
}

// TestWhatTheInternerHoldsOnceItsObjectsAreGoneIsAboutItsBudget proves
// the same bound once the objects are gone, when what the table keeps
// alive is all its own: managedFields times that no two objects share
// (an Events informer's), until just before the table would start afresh.
func TestWhatTheInternerHoldsOnceItsObjectsAreGoneIsAboutItsBudget(t *testing.T) {
	var in interner
	before := liveHeap()
	for i := 0; in.bytes < internBudget-2*entryBytes; i++ {
		at := metav1.NewTime(time.Unix(1_700_000_000+int64(i), 0))
		in.share(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Time: &at}}}})
	}
	grew := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(&in)
	t.Logf("the interner counts %d bytes and holds %d (%.2f× internBudget)", in.bytes, grew, float64(grew)/internBudget)
	require.LessOrEqual(t, grew, int64(internBudget*3/2),
		"the interner holds %.2f× internBudget of times alone", float64(grew)/internBudget)
}
