package sharedinformer_test

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// managedBy returns a ConfigMap whose managedFields say manager owns
// fields, each built afresh, as a decoder builds it.
func managedBy(name, manager, fields string) *corev1.ConfigMap {
	cm := configMap(name)
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: string([]byte(manager)), Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}}
	return cm
}

// The objects of a cache share the field sets their managedFields
// repeat: two ConfigMaps a client wrote the same way hold one FieldsV1
// between them, and one copy of its manager's name; one written another
// way keeps its own. A deep copy shares nothing.
func TestCachedObjectsShareTheFieldSetsTheirManagedFieldsRepeat(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	const same, other = `{"f:data":{"f:v":{}}}`, `{"f:data":{"f:w":{}}}`
	for _, cm := range []*corev1.ConfigMap{managedBy("a", "scale", same), managedBy("b", "scale", same), managedBy("c", "scale", other)} {
		_, err := lw.Create(cm)
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)
	get := func(name string) metav1.ManagedFieldsEntry {
		cm, err := inf.Lister().Namespace("default").Get(name)
		require.NoError(t, err)
		return cm.ManagedFields[0]
	}
	a, b, c := get("a"), get("b"), get("c")
	require.Same(t, a.FieldsV1, b.FieldsV1, "one field set, written the same way, is held once")
	require.NotSame(t, a.FieldsV1, c.FieldsV1)
	require.Equal(t, other, string(c.FieldsV1.Raw))
	require.Equal(t, "scale", b.Manager)
	require.Equal(t, unsafeStringData(a.Manager), unsafeStringData(b.Manager), "the manager's name is held once")

	_, err := lw.Create(managedBy("d", "scale", same)) // through the watch
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := inf.Lister().Namespace("default").Get("d"); return err == nil }, hangGuard, time.Millisecond)
	require.Same(t, a.FieldsV1, get("d").FieldsV1, "an object the watch brings shares too")

	copied, err := inf.Lister().Namespace("default").Get("b")
	require.NoError(t, err)
	copied = copied.DeepCopy()
	require.NotSame(t, a.FieldsV1, copied.ManagedFields[0].FieldsV1, "a deep copy owns its field set")
}

// unsafeStringData is where s's bytes are, to tell one copy of a string
// from two equal ones.
func unsafeStringData(s string) *byte { return unsafe.StringData(s) }
