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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A child waits for its parent's handover, so a parent deleted in the
// middle of a drain must not leave it waiting: with no garbage collector
// to delete it (as in the fake API server), the child is an orphan that
// the ring decides under its own key, and nothing but the parent's delete
// tells the sharder to look at it again. Two members hold their Leases;
// each acknowledges the drains of children (it is given their own keys)
// and of nothing else, so the parent's drain is never acknowledged: it
// sits on the member the ring does not choose, draining, its child with
// it. Once the sharder is at work (it assigned another object), the
// parent is deleted: its child, an orphan on a live member, is drained
// like any object, let go, and assigned to the ring's member. (Found by
// the replica checker, seed 29: a child stuck on its old member for as
// long as the run lasted.)
func TestTheChildOfAParentDeletedMidDrainMovesByTheRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, cfg, ns, shard, labels.SelectorFromSet(labels.Set{"role": "child"}), doNothing)
		})
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "order-1", Namespace: ns}}
		want := must(sharding.NewRing(members, 0)).Owner(sharding.RingKey(parent))
		other := members[0]
		if other == want {
			other = members[1]
		}

		shard := sharding.Shard{Ring: ring}
		parent.Labels = map[string]string{shard.Label(): other, shard.DrainLabel(): "true"}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "order-1-child", Namespace: ns,
			Labels:          map[string]string{shard.Label(): other, "role": "child"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(child).Do(ctx).Error())
		witness := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "witness", Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(witness).Do(ctx).Error())

		type labelling struct {
			action string
			key    informer.Key
		}
		assigned := make(chan labelling, 8)
		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.OnLabel = func(action string, key informer.Key, _ string) {
				select {
				case assigned <- labelling{action, key}:
				default: // more than this test reads: never block the sharder
				}
			}
		})
		require.Equal(t, "witness", receive(t, assigned, time.Minute).key.Name, "the sharder's first label is the witness's")
		require.Equal(t, other, labelOf(ctx, t, c.core, ns, child.Name), "the child waits for its draining parent")

		require.NoError(t, c.core.Delete().Namespace(ns).Resource("configmaps").Name(parent.Name).Do(ctx).Error())
		step := receive(t, assigned, time.Minute) // simulated: without the fix nothing ever comes
		require.Equal(t, labelling{"drain", informer.KeyFor(child)}, step, "the orphan leaves its live member by a drain")
		step = receive(t, assigned, time.Minute)
		require.Equal(t, labelling{"assign", informer.KeyFor(child)}, step, "let go, the orphan is assigned by the ring")
		require.Equal(t, want, labelOf(ctx, t, c.core, ns, child.Name), "the orphan is on the ring's member")
	})
}

// labelOf reads name's shard label in ring from the API server.
func labelOf(ctx context.Context, t *testing.T, core *rest.RESTClient, ns, name string) string {
	cm := &corev1.ConfigMap{}
	require.NoError(t, core.Get().Namespace(ns).Resource("configmaps").Name(name).Do(ctx).Into(cm))
	return cm.Labels[sharding.Shard{Ring: ring}.Label()]
}
