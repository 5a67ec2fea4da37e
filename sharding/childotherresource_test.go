package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
)

// A parent's drain waits while one of its children is reconciled on its
// member under its own key, since the children go with the parent,
// straight to its next member (Reconciler's doc). A child of another
// sharded resource (a Secret whose controller is a ConfigMap; a Pod of a
// ReplicaSet) is reconciled by that resource's own Reconciler, as the
// package asks: it must not reach the parent's next member while the old
// member's reconcile of it still runs.
func TestAChildOfAnotherResourceDoesNotReachItsParentsNextMemberWhileItsOwnKeysReconcileRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		childReconciles := watchOverlapsOf("child", 10*time.Second)
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			var mwg sync.WaitGroup
			mwg.Go(func() {
				runController(ctx, t, cfg, ns, shard, "configmaps", si.EnqueueKey[*corev1.ConfigMap], 2, doNothing)
			})
			runController(ctx, t, cfg, ns, shard, "secrets", si.EnqueueKey[*corev1.Secret], 2, childReconciles.of(shard.Member))
			mwg.Wait()
		})
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		a, b := members[0], members[1]
		parent := c.createConfigMap(ctx, t, nameOn(r, ns, "parent", b), a, nil)
		childReconciles.slow.Store(true)
		child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: map[string]string{sharding.Shard{Ring: ring}.Label(): a},
			OwnerReferences: controlledByConfigMap(parent)}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("secrets").Body(child).Do(ctx).Error())
		require.Equal(t, a, receive(t, childReconciles.reconciled, guard), "a reconciles the child under its own key")

		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.Resources = []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps"), corev1.SchemeGroupVersion.WithResource("secrets")}
		})
		c.awaitLabel(ctx, t, parent.Name, b, "the parent never reached %s", b)
		time.Sleep(15 * time.Second)
		childReconciles.requireNone(t)
	})
}
