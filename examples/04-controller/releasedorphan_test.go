package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Review r8. web scales down and releases kept, which a live keeper also
// owns (TestScalingDownReleasesAChildASecondLiveOwnerAlsoOwnsAndDeletesTheRest).
// Then keeper is deleted. kept, still labelled role=child,parent=web,
// now has no owner that exists. Had web been deleted rather than scaled
// down, kept would keep web's reference and "once that owner is gone
// too, the next reconcile of the parent's name deletes it" (docs/08,
// TestAChildLeftForASecondOwnerIsDeletedOnceThatOwnerIsGoneToo). After a
// release nothing ever does: the controller "does not count on" a
// garbage collector (controller.go), and the same happens when keeper's
// delete races the release (the cache still shows keeper). Passing: kept
// is deleted at web's next reconcile, as the gone-parent path does.
func TestAReleasedChildWhoseLastOwnerGoesIsDeleted(t *testing.T) {
	client, ctx, start := onFake(t)
	keeper := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}).Do(ctx).Into(keeper))
	web := createParent(ctx, t, client, "web", "1")
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: map[string]string{roleLabel: "child", parentLabel: "web"},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(web, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID},
			}},
		Data: map[string]string{"value": "v"},
	}).Do(ctx).Error())
	start()
	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"replicas":"0"}}`)).Do(ctx).Error())
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 0 },
		10*time.Second, 10*time.Millisecond, "kept was never released")

	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("keeper").Do(ctx).Error())
	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"replicas":"1"}}`)).Do(ctx).Error()) // web's next reconcile
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1 },
		10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Error())
	}, 5*time.Second, 50*time.Millisecond, "a released child none of whose owners exists any more was never deleted")
}
