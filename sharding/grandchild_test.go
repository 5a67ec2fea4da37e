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

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A child that is itself a parent (a ReplicaSet between its Deployment
// and its Pods) is reconciled with its own children by whoever holds it:
// the member it moves to must find them there when it first reconciles it,
// or it creates them again ("Children follow their parent": the children
// go first, then the parent). Grandparent, parent and grandchild sit on a;
// the ring gives the grandparent to b. When the middle object reaches b,
// its own child must already be there.
func TestAChildThatIsAParentReachesItsNewMemberOnlyAfterItsOwnChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconciler(ctx, t, cfg, ns, shard)
		})
		r := must(sharding.NewRing(members, 0))
		var name string
		for i := 0; ; i++ {
			name = fmt.Sprintf("deploy-%d", i)
			if r.Owner(ns+"/"+name) == members[1] {
				break
			}
		}
		a, b := members[0], members[1]
		label := sharding.Shard{Ring: ring}.Label()
		isController := true
		top := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{label: a}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(top).Do(ctx).Into(top))
		mid := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "replicaset", Namespace: ns, Labels: map[string]string{label: a},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: top.Name, UID: top.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(mid).Do(ctx).Into(mid))
		pod := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: ns, Labels: map[string]string{label: a},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: mid.Name, UID: mid.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(pod).Do(ctx).Error())

		var mu sync.Mutex
		var ahead []string
		midMoved := make(chan struct{}, 1)
		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.OnLabel = func(action string, key informer.Key, member string) {
				if key.Name != mid.Name || (action != "move" && action != "assign") {
					return
				}
				if got := labelOf(context.Background(), t, c.core, ns, pod.Name); got != member {
					mu.Lock()
					ahead = append(ahead, fmt.Sprintf("%s %s to %s at %v while its child %s was labelled %q", action, key.Name, member, time.Now(), pod.Name, got))
					mu.Unlock()
				}
				select {
				case midMoved <- struct{}{}:
				default:
				}
			}
		})
		receive(t, midMoved, time.Minute)
		deadline := time.Now().Add(time.Minute)
		for labelOf(ctx, t, c.core, ns, pod.Name) != b {
			require.True(t, time.Now().Before(deadline), "the grandchild never reached %s", b)
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, ahead, "a child that is a parent reached its new member before its own child")
	})
}
