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

// web has two children: one it alone owns, and kept, which it controls
// and a live keeper also owns. web is scaled down to 0. The child web
// alone owns is deleted; kept is not web's alone to delete, so web
// releases it (drops its own owner reference and its labels role=child,
// parent=web) and keeper keeps it. Once released it is no longer web's
// child, so web's count is 0, the number
// it asks for. (Found by a review: the scale-down deleted kept, though
// the controller leaves such a child when its parent is gone.)
func TestScalingDownReleasesAChildASecondLiveOwnerAlsoOwnsAndDeletesTheRest(t *testing.T) {
	client, ctx, start := onFake(t)
	web, keeper := createKept(ctx, t, client, "2")
	start()
	count := func() string {
		got := &corev1.ConfigMap{}
		require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").Name("web").Do(ctx).Into(got))
		return got.Annotations[countAnnotation]
	}
	// kept and one child the controller made: two, in place.
	require.Eventually(t, func() bool { return count() == "2" }, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"replicas":"0"}}`)).Do(ctx).Error())
	require.Eventually(t, func() bool { return count() == "0" && controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 0 },
		10*time.Second, 10*time.Millisecond, "web was never scaled down to no children")

	got := &corev1.ConfigMap{}
	err := client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Into(got)
	require.False(t, apierrors.IsNotFound(err), "a ConfigMap a live keeper still owns was deleted when web scaled down")
	require.NoError(t, err)
	require.Equal(t, []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID}},
		got.OwnerReferences, "kept is released: web's reference dropped, keeper's left")
	require.Equal(t, "v", got.Data["value"], "kept's data is not web's to change any more")
	require.NotContains(t, got.Labels, roleLabel, "kept is released: our labels dropped too")
	require.NotContains(t, got.Labels, parentLabel, "kept is released: our labels dropped too")
	require.Empty(t, childrenOn(ctx, t, client, "web"), "the child web alone owned is deleted, and kept, released, is labelled web's child no more")
}
