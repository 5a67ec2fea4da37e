package sharedinformer_test

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/sharedinformer"
)

// writtenTogether is a ConfigMap as one client writes many in one
// second: the same owner, the same managedFields entry; only its name and
// data are its own. Each call's strings are its own in memory, as a
// decoder's are (a literal would be one string for every call).
func writtenTogether(name string) *corev1.ConfigMap {
	fresh := strings.Clone
	at := metav1.NewTime(time.Date(2026, 12, 6, 1, 2, 3, 0, time.UTC))
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: fresh("v1"), Kind: fresh("ConfigMap")},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: fresh("default"), Name: name,
			Labels:          map[string]string{"app": fresh("web-frontend-of-the-shop")},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("apps/v1"), Kind: fresh("Deployment"), Name: fresh("web-frontend"), UID: types.UID(fresh("6f1c2a4e-0d6b-4b8e-9a57-3c1f0e2d9b11"))}},
			ManagedFields: []metav1.ManagedFieldsEntry{{
				Manager: fresh("web-frontend-controller"), Operation: metav1.ManagedFieldsOperationType(fresh("Update")), APIVersion: fresh("v1"),
				Time: &at, FieldsType: fresh("FieldsV1"),
				FieldsV1: metav1.NewFieldsV1(`{"f:data":{".":{},"f:v":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`),
			}},
		},
		Data: map[string]string{"v": name},
	}
}

// sameBytes reports whether a and b are one string in memory, not two
// equal ones.
func sameBytes(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// TestCachedObjectsShareTheValuesTheyRepeat proves the interner's
// promise: two objects decoded apart (memlistwatch hands out copies, as a
// decoder makes fresh ones) are cached pointing at one copy of what they
// repeat, namespace, owner and managedFields, and a DeepCopy of either
// shares none of it.
func TestCachedObjectsShareTheValuesTheyRepeat(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, err := lw.Create(writtenTogether("listed"))
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	_, err = lw.Create(writtenTogether("watched"))
	require.NoError(t, err)

	var listed, watched *corev1.ConfigMap
	require.Eventually(t, func() bool {
		listed, _ = inf.Lister().Namespace("default").Get("listed")
		watched, _ = inf.Lister().Namespace("default").Get("watched")
		return listed != nil && watched != nil
	}, hangGuard, time.Millisecond, "the watched ConfigMap never reached the cache")

	require.Equal(t, listed.OwnerReferences, watched.OwnerReferences)
	for what, pair := range map[string][2]string{
		"namespace":             {listed.Namespace, watched.Namespace},
		"owner's kind":          {listed.OwnerReferences[0].Kind, watched.OwnerReferences[0].Kind},
		"owner's name":          {listed.OwnerReferences[0].Name, watched.OwnerReferences[0].Name},
		"owner's UID":           {string(listed.OwnerReferences[0].UID), string(watched.OwnerReferences[0].UID)},
		"managedFields manager": {listed.ManagedFields[0].Manager, watched.ManagedFields[0].Manager},
	} {
		require.True(t, sameBytes(pair[0], pair[1]), "the two cached objects hold two copies of their %s %q", what, pair[0])
	}
	require.Same(t, listed.ManagedFields[0].FieldsV1, watched.ManagedFields[0].FieldsV1, "two copies of one field set")
	require.Same(t, listed.ManagedFields[0].Time, watched.ManagedFields[0].Time, "two copies of one time")
	require.False(t, sameBytes(listed.Labels["app"], watched.Labels["app"]), "labels are not shared (intern.go says why), yet these are")

	copied := listed.DeepCopy()
	require.Equal(t, listed, copied)
	require.NotSame(t, listed.ManagedFields[0].FieldsV1, copied.ManagedFields[0].FieldsV1, "a DeepCopy shares the cache's field set")
	require.NotSame(t, listed.ManagedFields[0].Time, copied.ManagedFields[0].Time, "a DeepCopy shares the cache's time")
}

// widgetWrittenBy is an unstructured Widget whose one managedFields entry
// names manager and the field set fields, with every map and string its
// own, as a decoder makes them.
func widgetWrittenBy(name, manager string, fields map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": strings.Clone("example.com/v1"), "kind": strings.Clone("Widget"),
		"metadata": map[string]any{
			"namespace": strings.Clone("default"), "name": name,
			"managedFields": []any{map[string]any{
				"manager": strings.Clone(manager), "operation": "Update", "apiVersion": "example.com/v1",
				"time": "2026-12-06T01:02:03Z", "fieldsType": "FieldsV1", "fieldsV1": runtime.DeepCopyJSONValue(fields),
			}},
		},
		"spec": map[string]any{"size": int64(len(name))},
	}}
}

// entryOf is the first managedFields entry of u, as the map it is.
func entryOf(u *unstructured.Unstructured) map[string]any {
	return u.Object["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
}

// sameMap reports whether a and b are one map, not two equal ones.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestCachedUnstructuredObjectsShareTheManagedFieldsEntriesTheyRepeat
// proves the interner's promise for unstructured objects: two Widgets
// written alike by one manager are cached pointing at one managedFields
// entry (a tree of maps, most of an unstructured object's metadata); a
// Widget whose field set differs keeps its own entry; a DeepCopy shares
// none of it.
func TestCachedUnstructuredObjectsShareTheManagedFieldsEntriesTheyRepeat(t *testing.T) {
	lw := memlistwatch.New[*unstructured.Unstructured]()
	inf, err := sharedinformer.New(sharedinformer.Options[*unstructured.Unstructured]{ListerWatcher: lw})
	require.NoError(t, err)
	specOnly := map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:size": map[string]any{}}}
	withLabels := map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:size": map[string]any{}}, "f:metadata": map[string]any{"f:labels": map[string]any{}}}
	for name, fields := range map[string]map[string]any{"a": specOnly, "b": specOnly, "c": withLabels} {
		_, err := lw.Create(widgetWrittenBy(name, "widget-controller", fields))
		require.NoError(t, err)
	}
	runInformer(t, inf)
	waitSynced(t, inf)

	get := func(name string) *unstructured.Unstructured {
		u, err := inf.Lister().Namespace("default").Get(name)
		require.NoError(t, err)
		return u
	}
	a, b, c := get("a"), get("b"), get("c")
	require.True(t, sameMap(entryOf(a), entryOf(b)), "two Widgets written alike hold two copies of one managedFields entry")
	require.False(t, sameMap(entryOf(a), entryOf(c)), "a Widget whose field set differs was given another's entry")
	require.Equal(t, withLabels, entryOf(c)["fieldsV1"], "a Widget's own field set changed")

	copied := a.DeepCopy()
	require.Equal(t, a, copied)
	require.False(t, sameMap(entryOf(a), entryOf(copied)), "a DeepCopy shares the cache's managedFields entry")
}
