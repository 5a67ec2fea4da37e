package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An earlier web's child whose second owner reference is
// dangling too (its keeper is gone). No owner of it exists: a garbage
// collector would delete it, and docs/08 says an earlier parent's child
// "is not adopted: it is deleted"; the skeleton's rule it cites leaves
// alone only a Secret "owned by a second object that still exists".
// Since 1f4db95 childrenOf leaves any child with two references, so
// this one stays forever.
func TestAnEarlierParentsChildWhoseSecondOwnerIsGoneTooIsDeleted(t *testing.T) {
	client, ctx, start := onFake(t)
	earlier := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "uid-of-an-earlier-web"}}
	require.NoError(t, client.Post().Namespace("demo").Resource("configmaps").Body(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Labels: map[string]string{roleLabel: "child", parentLabel: "web"},
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(earlier, corev1.SchemeGroupVersion.WithKind("ConfigMap")),
				{APIVersion: "v1", Kind: "ConfigMap", Name: "keeper", UID: "uid-of-a-gone-keeper"},
			}},
		Data: map[string]string{"value": "v"},
	}).Do(ctx).Error())
	web := createParent(ctx, t, client, "web", "1")
	start()
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1 },
		10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		err := client.Get().Namespace("demo").Resource("configmaps").Name("orphan").Do(ctx).Error()
		return apierrors.IsNotFound(err)
	}, 5*time.Second, 50*time.Millisecond, "an earlier web's child, none of whose owners exists, was never deleted")
}

// The same, reached the ordinary way: web controls kept, keeper also
// owns it; web is deleted (kept stays, right), then keeper is deleted.
// Now nothing owns kept, yet it stays forever, even after web is made
// anew and reconciled.
func TestAChildLeftForASecondOwnerIsDeletedOnceThatOwnerIsGoneToo(t *testing.T) {
	client, ctx, start := onFake(t)
	createKept(ctx, t, client, "1")
	start()
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("web").Do(ctx).Error())
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("keeper").Do(ctx).Error())
	web2 := createParent(ctx, t, client, "web", "1")
	require.Eventually(t, func() bool { return controlledBy(childrenOn(ctx, t, client, "web"), web2.UID) == 1 },
		10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool {
		err := client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Error()
		return apierrors.IsNotFound(err)
	}, 5*time.Second, 50*time.Millisecond, "a child none of whose owners exists any more was never deleted")
}
