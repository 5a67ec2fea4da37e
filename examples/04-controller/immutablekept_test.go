package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/testenv"
)

// Found by a review. web's child kept, which a keeper ConfigMap, still there,
// also owns, was made immutable, and web's value differs. The update is
// refused (422) and the controller deletes kept, taking it from keeper.
// The same round made a scale-down release such a child rather than
// delete it, because deleting it "would take it from an owner that
// still wants it, which the garbage collector never does"
// (deleteOrRelease, docs/08). Passing: kept is not deleted while keeper
// exists (released: web's reference and our labels dropped), and web
// still ends up with a child carrying its value. The real control
// plane, for the 422.
func TestAnImmutableChildASecondLiveOwnerAlsoOwnsIsReleasedNotDeleted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	ctx := t.Context()
	keeper, web := &corev1.ConfigMap{}, &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}).Do(ctx).Into(keeper))
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{roleLabel: "parent"}},
		Data:       map[string]string{"replicas": "1", "value": "v2"}}).Do(ctx).Into(web))
	yes := true
	require.NoError(t, client.Post().Namespace(ns).Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: map[string]string{roleLabel: "child", parentLabel: "web"},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(web, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID},
			}},
		Immutable: &yes, Data: map[string]string{"value": "v1"}}).Do(ctx).Error())
	startController(t, cp, ns, 0)

	children := func() []corev1.ConfigMap {
		var list corev1.ConfigMapList
		require.NoError(t, client.Get().Namespace(ns).Resource("configmaps").
			VersionedParams(&metav1.ListOptions{LabelSelector: roleLabel + "=child," + parentLabel + "=web"}, metav1.ParameterCodec).
			Do(context.Background()).Into(&list))
		return list.Items
	}
	require.Eventually(t, func() bool {
		c := children()
		return controlledBy(c, web.UID) == 1 && c[0].Data["value"] == "v2"
	}, 30*time.Second, 50*time.Millisecond, "web never had one child carrying v2")
	err = client.Get().Namespace(ns).Resource("configmaps").Name("kept").Do(context.Background()).Error()
	require.False(t, apierrors.IsNotFound(err), "kept, which keeper still owns, was deleted for being immutable")
	require.NoError(t, err)
}
