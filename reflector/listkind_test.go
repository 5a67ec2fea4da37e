package reflector_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/testenv"
)

// Real kube-apiserver answers, each mode, empty and not: every one must be
// accepted.
func TestEveryKindOfListerWatcherAcceptsTheRealServersLists(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx := t.Context()
	cms := corev1.SchemeGroupVersion.WithResource("configmaps")
	src := reflector.Source{Resource: cms, Namespace: ns}

	meta, err := reflector.NewMetadataListerWatcher(cp.Config(), src)
	require.NoError(t, err)
	_, lm, err := meta.List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "metadata-only, empty")
	t.Logf("metadata empty rv=%s", lm.ResourceVersion)

	un, err := reflector.NewUnstructuredListerWatcher(cp.Config(), src)
	require.NoError(t, err)
	_, _, err = un.List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "unstructured, empty")

	for _, pb := range []bool{false, true} {
		s := src
		s.Protobuf = pb
		ty, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cp.Config(), newScheme(t), s)
		require.NoError(t, err)
		_, _, err = ty.List(ctx, metav1.ListOptions{})
		assert.NoError(t, err, "typed, empty, protobuf=%v", pb)
	}
}

// A CRD's listKind is its author's choice: the API server only asks that
// it differ from kind (apiextensions validation). "GizmoCollection" is
// valid, and the server answers a LIST with it: an unstructured informer
// must not ask for a kind ending in List.
func TestAnInformerListsACustomResourceWhoseCRDNamesItsOwnListKind(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gizmos.listkind.listwatch.dev"},
		"spec": map[string]any{
			"group": "listkind.listwatch.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "gizmos", "kind": "Gizmo", "listKind": "GizmoCollection"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	})
	err = client.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	require.NoError(t, err)
	t.Cleanup(func() { // the control plane is shared: leave no CRD behind
		_ = client.Delete().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.listkind.listwatch.dev").Do(context.Background()).Error()
	})
	path := "/apis/listkind.listwatch.dev/v1/namespaces/" + ns + "/gizmos"
	for client.Get().AbsPath(path).Do(ctx).Error() != nil {
		require.NoError(t, ctx.Err(), "the CRD was never served")
		time.Sleep(50 * time.Millisecond)
	}
	obj, _ := json.Marshal(map[string]any{"apiVersion": "listkind.listwatch.dev/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "g1"}})
	require.NoError(t, client.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(obj).Do(ctx).Error())
	raw, err := client.Get().AbsPath(path).Do(ctx).Raw()
	require.NoError(t, err)
	t.Logf("the server's answer: %.200s", raw)

	src := reflector.Source{Resource: schema.GroupVersionResource{Group: "listkind.listwatch.dev", Version: "v1", Resource: "gizmos"}, Namespace: ns}
	un, err := reflector.NewUnstructuredListerWatcher(cp.Config(), src)
	require.NoError(t, err)
	items, _, err := un.List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "unstructured")
	assert.Len(t, items, 1)

	meta, err := reflector.NewMetadataListerWatcher(cp.Config(), src)
	require.NoError(t, err)
	mitems, _, err := meta.List(ctx, metav1.ListOptions{})
	assert.NoError(t, err, "metadata-only")
	assert.Len(t, mitems, 1)
}
