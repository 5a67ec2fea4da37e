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
		ManagedFields: []metav1.ManagedFieldsEntry{{FieldsV1: &metav1.FieldsV1{Raw: bytes.Clone(raw)}}},
	}}
}

// TestTheInternerHoldsAtMostItsBudgetAndSharesAgainAfterStartingAfresh
// proves the interner's bound: objects that repeat nothing (a field set
// of 1 KiB each, three budgets' worth) never make it hold more than
// internBudget bytes, and once it has started afresh, objects that repeat
// a value share it again.
func TestTheInternerHoldsAtMostItsBudgetAndSharesAgainAfterStartingAfresh(t *testing.T) {
	var in interner
	for i := range 3 * internBudget / 1024 {
		in.share(withFieldSet(fmt.Appendf(bytes.Repeat([]byte("x"), 1024-8), "%08d", i)))
		require.LessOrEqual(t, in.bytes, internBudget, "after %d objects", i+1)
		held := 0
		for raw := range in.fields {
			held += len(raw)
		}
		for s := range in.strings {
			held += len(s)
		}
		require.LessOrEqual(t, held, internBudget, "after %d objects the table holds more than its budget", i+1)
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
