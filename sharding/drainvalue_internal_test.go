package sharding

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// A drain names its object's controller by its uid, or, for a uid that
// is no label value (an owner reference is written by its client, and
// the API server checks only that its uid is set), by the uid's digest:
// always a label value, never stale for the controller it was written
// for, and stale for another.
func TestADrainNamesItsControllerByAValidLabelValue(t *testing.T) {
	shard := Shard{Ring: "web", Member: "a"}
	yes := true
	child := func(uid types.UID) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "kid", OwnerReferences: []metav1.OwnerReference{{Kind: "ConfigMap", Name: "p", UID: uid, Controller: &yes}}}
	}
	for _, uid := range []types.UID{"0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d", "urn:uuid:0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d", types.UID(make([]byte, 64)), "ends-with-"} {
		obj := child(uid)
		v := drainValue(obj)
		require.Empty(t, validation.IsValidLabelValue(v), "the drain of a child of uid %q is %q", uid, v)
		obj.Labels = map[string]string{shard.DrainLabel(): v}
		require.False(t, shard.staleDrain(obj), "a drain written for the controller the object has is not stale (uid %q)", uid)
		other := child("another")
		other.Labels = obj.Labels
		require.True(t, shard.staleDrain(other), "a drain written for uid %q is stale on a child of another", uid)
	}
	require.Equal(t, "0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d", drainValue(child("0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d")), "a uid the API server made is written as it is")
}

// An owner reference's uid is whatever its writer put there, and may be
// a label value the drain label gives another meaning: "true" (an older
// sharder's drain, acknowledged whatever the controller), "orphan" (a
// drain of an object with no controller), or a digest's "sha256-…". A
// drain written for a controller of such a uid must still be stale once
// the object has another controller, or none: else its member lets it go
// after an adoption, the window drains that name their controller close.
func TestADrainForAControllerWhoseUIDIsADrainValueIsStaleForAnother(t *testing.T) {
	shard := Shard{Ring: "web", Member: "a"}
	yes := true
	child := func(uid types.UID) *metav1.ObjectMeta {
		obj := &metav1.ObjectMeta{Name: "kid"}
		if uid != "" {
			obj.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "p", UID: uid, Controller: &yes}}
		}
		return obj
	}
	digestOfAnother := drainValue(child("urn:uuid:0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d"))
	for _, uid := range []types.UID{drainForOldSharders, drainOfOrphan, types.UID(digestOfAnother)} {
		v := drainValue(child(uid))
		require.Empty(t, validation.IsValidLabelValue(v), "the drain of a child of uid %q is %q", uid, v)
		for _, other := range []types.UID{"another", "", "urn:uuid:0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d"} {
			if other == uid {
				continue
			}
			now := child(other)
			now.Labels = map[string]string{shard.DrainLabel(): v}
			require.True(t, shard.staleDrain(now), "a drain written for a controller of uid %q (%q) is stale on a child of %q", uid, v, other)
		}
	}
}
