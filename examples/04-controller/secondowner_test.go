package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A labelled ConfigMap that an earlier web controls but that a
// second object, still there, also owns. The skeleton's ownerGone leaves
// such a Secret alone (it asks the server for each other owner, docs/08:
// "owned by a second object that still exists, is left alone"), and a garbage
// collector would only drop the dangling reference; chapter 08 says the
// example's children are judged "as for the skeleton's Secrets". The
// controller must leave it. (Found by a review: it deleted it.)
func TestAChildOfAnEarlierParentThatASecondLiveOwnerAlsoOwnsIsNotDeleted(t *testing.T) {
	client, ctx, start := onFake(t)
	keeper := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "keeper"}}).Do(ctx).Into(keeper))
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-of-an-earlier-web"}}
	kept := &corev1.ConfigMap{}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Labels: map[string]string{roleLabel: "child", parentLabel: "web"},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(earlier, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID},
			}},
		Data: map[string]string{"value": "v"},
	}).Do(ctx).Into(kept))
	web := createParent(ctx, t, client, "web", "1")
	start()

	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1 },
		10*time.Second, 10*time.Millisecond)
	got := &corev1.ConfigMap{}
	err := client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Into(got)
	require.False(t, apierrors.IsNotFound(err), "a ConfigMap a live keeper still owns was deleted as an earlier web's child")
	require.NoError(t, err)
}

// The same with the parent itself: web controls the child, keeper also
// owns it; web is deleted. A garbage collector would keep the child (one
// owner left); the skeleton would keep its Secret.
func TestAChildASecondLiveOwnerAlsoOwnsOutlivesItsParent(t *testing.T) {
	client, ctx, start := onFake(t)
	createKept(ctx, t, client, "1")
	start()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("web").Do(ctx).Error())
	time.Sleep(2 * time.Second)
	err := client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Into(&corev1.ConfigMap{})
	require.False(t, apierrors.IsNotFound(err), "a ConfigMap a live keeper still owns was deleted with web")
	require.NoError(t, err)
}
