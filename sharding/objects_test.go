package sharding_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// nameOn returns the first of prefix-0, prefix-1, … whose key in ns the
// ring r places on member.
func nameOn(r *sharding.Ring, ns, prefix, member string) string {
	return firstName(prefix, func(name string) bool { return r.Owner(ns+"/"+name) == member })
}

// nameOff returns the first of prefix-0, prefix-1, … whose key in ns the
// ring r places on any member but member.
func nameOff(r *sharding.Ring, ns, prefix, member string) string {
	return firstName(prefix, func(name string) bool { return r.Owner(ns+"/"+name) != member })
}

func firstName(prefix string, ok func(name string) bool) string {
	for i := 0; ; i++ {
		if name := fmt.Sprintf("%s-%d", prefix, i); ok(name) {
			return name
		}
	}
}

// createConfigMap creates the ConfigMap name in c's namespace, labelled
// with member on the test ring unless member is "", and controlled by
// owner unless owner is nil; it returns it as created.
func (c *fakeCluster) createConfigMap(ctx context.Context, t *testing.T, name, member string, owner *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}}
	if member != "" {
		cm.Labels = map[string]string{sharding.Shard{Ring: ring}.Label(): member}
	}
	if owner != nil {
		cm.OwnerReferences = controlledByConfigMap(owner)
	}
	require.NoError(t, c.core.Post().Namespace(c.ns).Resource("configmaps").Body(cm).Do(ctx).Into(cm))
	return cm
}

// controlledByConfigMap is the owner references of an object whose
// controller is the ConfigMap owner.
func controlledByConfigMap(owner *corev1.ConfigMap) []metav1.OwnerReference {
	isController := true
	return []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &isController}}
}

// adopt makes parent the controller of the ConfigMap name (a ReplicaSet
// adopting an orphan Pod, or a Pod moving to another ReplicaSet) by a
// merge patch whose owner references replace any it had.
func (c *fakeCluster) adopt(ctx context.Context, t *testing.T, parent *corev1.ConfigMap, name string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`,
		parent.Name, parent.UID)
	require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(c.ns).Resource("configmaps").Name(name).
		Body([]byte(patch)).Do(ctx).Error())
}

// awaitLabel polls the ConfigMap name every 100 ms until it is labelled
// with member; if that takes more than a minute (simulated, in a
// synctest bubble) the test fails with failure and the label it has.
func (c *fakeCluster) awaitLabel(ctx context.Context, t *testing.T, name, member, failure string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for got := labelOf(ctx, t, c.core, c.ns, name); got != member; got = labelOf(ctx, t, c.core, c.ns, name) {
		require.True(t, time.Now().Before(deadline), "%s (label %q)", fmt.Sprintf(failure, args...), got)
		time.Sleep(100 * time.Millisecond)
	}
}
