package sharding

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// An owner reference is written by its client, and the API server checks
// only that its uid is set: a controller whose uid is no label value
// (too long, or with a character a label value may not hold) would make
// every drain of its children a PATCH refused for ever. Such a drain is
// "true", which every member acknowledges, and it is never stale.
func TestADrainForAControllerWhoseUIDIsNoLabelValueIsWrittenAndAcknowledged(t *testing.T) {
	shard := Shard{Ring: "web", Member: "a"}
	yes := true
	for uid, want := range map[types.UID]string{
		"0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d": "0b8d7f3a-6c1e-4f5a-9d2b-7e4c1a3f5b6d",
		"not a label value":                    drainForOldSharders,
		types.UID(make([]byte, 64)):            drainForOldSharders,
	} {
		obj := &metav1.ObjectMeta{Name: "kid", OwnerReferences: []metav1.OwnerReference{{Kind: "ConfigMap", Name: "p", UID: uid, Controller: &yes}}}
		require.Equal(t, want, drainValue(obj), "the drain of a child of uid %q", uid)
		obj.Labels = map[string]string{shard.DrainLabel(): drainValue(obj)}
		require.False(t, shard.staleDrain(obj), "a drain written for the controller the object has is not stale (uid %q)", uid)
	}
}
