package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// web scales down and releases kept, which a live keeper also owns
// (TestScalingDownReleasesAChildASecondLiveOwnerAlsoOwnsAndDeletesTheRest);
// then keeper is deleted. Review r8 found kept, released with only web's
// reference dropped, still labelled role=child,parent=web and with no
// owner left that exists, never deleted, and asked that web's next
// reconcile delete it, as it deletes a gone parent's child once its
// other owners are gone. Our answer: a release is complete. It drops
// our labels as well as our reference, so kept is simply keeper's
// ConfigMap, out of this controller's view (not selected as a child, its
// events enqueue nothing), and the controller never touches it again,
// keeper gone or not. What becomes of an object whose owners all go is
// theirs, a garbage collector's (on a cluster it deletes kept, whose
// every owner reference then dangles), not a controller's that gave it
// away. So this test checks the release drops our labels, and that web's
// next reconcile after keeper's delete leaves kept as it was.
func TestAReleasedChildIsNoLongerInOurViewAndIsNeverTouchedAgain(t *testing.T) {
	client, ctx, start := onFake(t)
	web, keeper := createKept(ctx, t, client, "1", "team=keeper")
	start()
	count := func() string {
		got := &corev1.ConfigMap{}
		require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").Name("web").Do(ctx).Into(got))
		return got.Annotations[countAnnotation]
	}
	require.Eventually(t, func() bool { return count() == "1" }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"replicas":"0"}}`)).Do(ctx).Error())
	require.Eventually(t, func() bool { return count() == "0" }, 10*time.Second, 10*time.Millisecond, "kept was never released")

	released := &corev1.ConfigMap{}
	require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Into(released))
	require.Equal(t, map[string]string{"team": "keeper"}, released.Labels, "the release drops our labels, and only ours")
	require.Equal(t, []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: keeper.Name, UID: keeper.UID}}, released.OwnerReferences)

	require.NoError(t, client.Delete().Namespace("demo").Resource("configmaps").Name("keeper").Do(ctx).Error())
	require.NoError(t, client.Patch(types.MergePatchType).Namespace("demo").Resource("configmaps").Name("web").
		Body([]byte(`{"data":{"replicas":"1"}}`)).Do(ctx).Error()) // web's next reconciles: a child created, then the count
	require.Eventually(t, func() bool {
		return count() == "1" && controlledBy(childrenOn(ctx, t, client, "web"), web.UID) == 1
	}, 10*time.Second, 10*time.Millisecond)
	now := &corev1.ConfigMap{}
	require.NoError(t, client.Get().Namespace("demo").Resource("configmaps").Name("kept").Do(ctx).Into(now),
		"the controller deleted a ConfigMap it had released")
	require.Equal(t, released.ResourceVersion, now.ResourceVersion, "the controller changed a ConfigMap it had released")
}
