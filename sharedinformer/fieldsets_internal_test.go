package sharedinformer

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func withFieldSet(fields string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{
		Manager: "m", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}}}
}

// fieldSets keeps at most maxFieldSets distinct sets, the first seen:
// past them an object keeps its own, and the sets already kept are still
// shared.
func TestFieldSetsKeepAtMostMaxFieldSets(t *testing.T) {
	var f fieldSets
	first := withFieldSet("0")
	f.share(first)
	for i := 1; i < maxFieldSets+10; i++ {
		f.share(withFieldSet(strconv.Itoa(i)))
	}
	require.Len(t, f.sets, maxFieldSets)
	late, again := withFieldSet(strconv.Itoa(maxFieldSets+5)), withFieldSet(strconv.Itoa(maxFieldSets+5))
	f.share(late)
	f.share(again)
	require.NotSame(t, late.ManagedFields[0].FieldsV1, again.ManagedFields[0].FieldsV1, "a set past the bound is not kept")
	zero := withFieldSet("0")
	f.share(zero)
	require.Same(t, first.ManagedFields[0].FieldsV1, zero.ManagedFields[0].FieldsV1)
}

// An object fieldSets cannot see into (unstructured: its managedFields
// are maps) and one with none are left as they are.
func TestFieldSetsLeaveObjectsWithoutTypedMetadataAlone(t *testing.T) {
	var f fieldSets
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x",
		"managedFields": []any{map[string]any{"manager": "m", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}}}}}}
	f.share(u)
	f.share(&corev1.ConfigMap{})
	require.Empty(t, f.sets)
}
