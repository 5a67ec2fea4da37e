package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/sharding"
)

// An object that a sharded parent adopts (a ReplicaSet adopting an orphan
// Pod: a controller owner reference added to an object that had none) sat
// on the ring at its own key, and may be labelled with a live member other
// than its new parent's. That member, keying by ring key, may be
// reconciling it under that key (its own, before the adoption) right now,
// so it must leave that member by a drain, like every object leaving a
// live member: it must not reach the parent's member, who reconciles it
// with the parent, before the old member's reconcile has ended.
func TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		held := holdFirstReconcileOf("orphan")
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, held.of(shard.Member))
		})
		guard := time.Minute // simulated: many times what this takes

		// A parent and an orphan that the ring places on different members.
		r := must(sharding.NewRing(members, 0))
		var parentName string
		for i := 0; ; i++ {
			parentName = fmt.Sprintf("parent-%d", i)
			if r.Owner(ns+"/"+parentName) != r.Owner(ns+"/orphan") {
				break
			}
		}
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: parentName, Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(orphan).Do(ctx).Error())

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "orphan")
		require.Equal(t, labelStep{"assign", r.Owner(ns + "/orphan")}, receive(t, labelled, guard).labelStep)
		first := receive(t, held.began, guard)
		require.Equal(t, r.Owner(ns+"/orphan"), first.member, "its member reconciles it under its own key, and holds it")

		// The parent adopts the orphan while its member reconciles it.
		adopt := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`,
			parentName, parent.UID)
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("orphan").
			Body([]byte(adopt)).Do(ctx).Error())

		step := receive(t, labelled, guard)
		require.Equal(t, "drain", step.action,
			"while %s reconciled it, the adopted child was %q to %s (its parent's member), not drained", first.member, step.action, step.member)

		held.release()
		done := receive(t, held.ended, guard)
		moved := receive(t, labelled, guard)
		require.Equal(t, r.Owner(ns+"/"+parentName), moved.member, "it follows its parent at last")
		require.False(t, moved.at.Before(done.at), "it reached its parent's member before the old one's reconcile ended")
	})
}
