package sharding_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

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
		a, b := members[0], members[1]
		top := c.createConfigMap(ctx, t, nameOn(r, ns, "deploy", b), a, nil)
		mid := c.createConfigMap(ctx, t, "replicaset", a, top)
		pod := c.createConfigMap(ctx, t, "pod", a, mid)

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
		c.awaitLabel(ctx, t, pod.Name, b, "the grandchild never reached %s", b)
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, ahead, "a child that is a parent reached its new member before its own child")
	})
}
