//go:build !fieldsv1string

// A nil and an empty field set are one value under apimachinery's build
// tag fieldsv1string, so this test is built only without it.

package sharedinformer_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// withFields is a ConfigMap whose one managedFields entry has the field
// set fields.
func withFields(name string, fields *metav1.FieldsV1) *corev1.ConfigMap {
	cm := configMap(name)
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: fields}}
	return cm
}

// TestAnEmptyFieldSetIsCachedEmptyNotNil proves that the cache holds the
// field set the server sent: a FieldsV1 whose Raw is empty and one whose
// Raw is nil are two values (protobuf reads a raw field sent empty as
// []byte{}, and one not sent as nil; JSON writes nil as null and empty
// as nothing), but the interner keys field sets by string(Raw), "" for
// both, so the object cached second is given the first one's.
//
// Passing means a cached object's FieldsV1 is reflect.DeepEqual to the
// server's.
func TestAnEmptyFieldSetIsCachedEmptyNotNil(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	nilSet, err := lw.Create(withFields("a-nil", &metav1.FieldsV1{}))
	require.NoError(t, err)
	emptySet, err := lw.Create(withFields("b-empty", &metav1.FieldsV1{Raw: []byte{}}))
	require.NoError(t, err)
	require.NotNil(t, emptySet.ManagedFields[0].FieldsV1.Raw, "the server holds an empty, not nil, field set")
	runInformer(t, inf)
	waitSynced(t, inf)

	for _, want := range []*corev1.ConfigMap{nilSet, emptySet} {
		var got *corev1.ConfigMap
		require.Eventually(t, func() bool {
			got, _ = inf.Lister().Namespace("default").Get(want.Name)
			return got != nil
		}, hangGuard, time.Millisecond)
		require.True(t, reflect.DeepEqual(want.ManagedFields, got.ManagedFields),
			"%s: the server's field set is %#v, the cache's %#v", want.Name, want.ManagedFields[0].FieldsV1.Raw, got.ManagedFields[0].FieldsV1.Raw)
	}
}
