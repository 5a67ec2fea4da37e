package sharding_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A member that keys by ring key maps each object to
// informer.ParseKey(sharding.RingKey(obj)) (docs/16: "EnqueueMapped with
// RingKey", as the replica checker's members do). For a cluster-scoped
// object RingKey said "/name", which ParseKey refuses (an empty
// namespace before the "/"): such a member enqueued nothing for a
// cluster-scoped sharded resource, reconciled none of it, and never
// acknowledged a drain of it, so every move off a live member hung.
// RingKey must be a key's text form, the one Reconciler holds the
// object's drain under (its own key, or its owner's).
//
// Passing: the ring key of a cluster-scoped object and of its
// cluster-scoped child parse, as the object's own key.
func TestTheRingKeyOfAClusterScopedObjectParsesAsItsKey(t *testing.T) {
	parent := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin", UID: "1"}}
	child := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin-extra", UID: "2",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, rbacv1.SchemeGroupVersion.WithKind("ClusterRole"))}}}
	for _, obj := range []metav1.Object{parent, child} {
		key, err := informer.ParseKey(sharding.RingKey(obj))
		require.NoError(t, err, "RingKey of cluster-scoped %s", obj.GetName())
		require.Equal(t, informer.KeyFor(parent), key, "the ring key of %s is its owner's key", obj.GetName())
	}
}
