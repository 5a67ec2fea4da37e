package sharedinformer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withFieldSet is a ConfigMap whose one managedFields entry holds raw.
func withFieldSet(raw []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace:     strings.Clone("default"),
		ManagedFields: []metav1.ManagedFieldsEntry{{FieldsV1: metav1.NewFieldsV1(string(raw))}},
	}}
}

// TestTheInternerHoldsAtMostItsBudgetAndSharesAgainAfterStartingAfresh
// proves the interner's bound: objects that repeat nothing (a field set
// of 1 KiB each, three budgets' worth; then short namespaces, whose map
// entries cost more than their text) never make it hold more than
// internBudget bytes, each entry counted with its map slot, and once it
// has started afresh, objects that repeat a value share it again.
func TestTheInternerHoldsAtMostItsBudgetAndSharesAgainAfterStartingAfresh(t *testing.T) {
	var in interner
	held := func() int {
		n := 0
		for raw := range in.fields {
			n += 2*len(raw) + entryBytes // the key is a copy of the bytes
		}
		for s := range in.strings {
			n += len(s) + entryBytes
		}
		return n + len(in.times)*(entryBytes+32) + len(in.entries)*entryBytes
	}
	// The count is checked on every object, and checked against what the
	// table holds (a walk of it) every few hundred.
	for i := range 3 * internBudget / 1024 {
		in.share(withFieldSet(fmt.Appendf(bytes.Repeat([]byte("x"), 1024-8), "%08d", i)))
		require.LessOrEqual(t, in.bytes, internBudget, "after %d objects", i+1)
		if i%97 == 0 {
			require.Equal(t, held(), in.bytes, "after %d objects the table holds other than it counts", i+1)
		}
	}
	for i := range 3 * internBudget / entryBytes {
		cm := withFieldSet(nil)
		cm.Namespace = fmt.Sprintf("n%d", i)
		in.share(cm)
		require.LessOrEqual(t, in.bytes, internBudget, "after %d short namespaces", i+1)
		if i%997 == 0 {
			require.Equal(t, held(), in.bytes, "after %d short namespaces the table holds other than it counts", i+1)
		}
	}

	raw := []byte(`{"f:data":{}}`)
	a, b := withFieldSet(raw), withFieldSet(raw)
	in.share(a)
	in.share(b)
	require.Same(t, a.ManagedFields[0].FieldsV1, b.ManagedFields[0].FieldsV1)
}

// TestTheInternerNeverKeepsAValueLongerThanItsLongest proves that a
// value past internLongest stays the object's own: one such value would
// take a large share of the budget for one object.
func TestTheInternerNeverKeepsAValueLongerThanItsLongest(t *testing.T) {
	var in interner
	raw := bytes.Repeat([]byte("y"), internLongest+1)
	a, b := withFieldSet(raw), withFieldSet(raw)
	in.share(a)
	in.share(b)
	require.NotSame(t, a.ManagedFields[0].FieldsV1, b.ManagedFields[0].FieldsV1)
	require.Zero(t, len(in.fields))
}

// TestAManagedFieldsEntryWithAFieldTheAPIDoesNotDefineIsNeverShared
// proves that an entry the key cannot tell apart from another, one with
// a field beside those the API defines, stays the object's own.
func TestAManagedFieldsEntryWithAFieldTheAPIDoesNotDefineIsNeverShared(t *testing.T) {
	entry := func() map[string]any {
		return map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{}, "extra": "x"}
	}
	var in interner
	a, b := entry(), entry()
	require.True(t, sameMap(in.sharedEntry(a), a))
	require.True(t, sameMap(in.sharedEntry(b), b))
}

// TestSharingAnObjectWhoseValuesAreAlreadySharedWritesNothing proves that
// the interner writes a field only when that changes it: an object shared
// once is shared again while another goroutine reads it, which the race
// detector (make test runs every test under -race) reports if anything is
// written, even the same value.
func TestSharingAnObjectWhoseValuesAreAlreadySharedWritesNothing(t *testing.T) {
	var in interner
	first, again := withFieldSet([]byte(`{"f:data":{}}`)), withFieldSet([]byte(`{"f:data":{}}`))
	first.ManagedFields[0].Time = &metav1.Time{}
	again.ManagedFields[0].Time = &metav1.Time{}
	first.OwnerReferences = []metav1.OwnerReference{{Kind: strings.Clone("Deployment"), Name: strings.Clone("web")}}
	again.OwnerReferences = []metav1.OwnerReference{{Kind: strings.Clone("Deployment"), Name: strings.Clone("web")}}
	in.share(first)
	in.share(again)
	require.Same(t, first.ManagedFields[0].FieldsV1, again.ManagedFields[0].FieldsV1)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_ = again.Namespace + again.OwnerReferences[0].Name + again.ManagedFields[0].FieldsV1.GetRawString()
			_ = again.ManagedFields[0].Time.IsZero()
		}
	}()
	for range 100 {
		in.share(again)
	}
	<-done
}
