package sharding_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A member reconciles a parent with its children, so a child must never
// reach a new member while the old one still owns the parent: the old
// member, missing the child from its cache, could create it again. Member
// b joins a ring where a owns every parent and child; each child that
// moves finds its parent already let go (unlabelled) or on the child's
// new member, never still labelled with another.
func TestAChildMovesOnlyOnceItsParentHasLeftItsOldOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 40
		createParents(ctx, t, c.core, ns, parents)

		rec := newRecords()
		var labels sync.Map
		var mu sync.Mutex
		var checked int
		var ahead []string
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		shard := sharding.Shard{Ring: ring}
		startSharder(ctx, t, &wg, cfg, ns, &labels, func(sc *sharding.SharderConfig) {
			counting := sc.OnLabel
			sc.OnLabel = func(action string, key informer.Key, member string) {
				counting(action, key, member)
				parentName, isChild := strings.CutSuffix(key.Name, "-child")
				if (action != "move" && action != "assign") || !isChild { // a child on a live member is drained, then assigned
					return
				}
				parent := &corev1.ConfigMap{}
				if err := c.core.Get().Namespace(ns).Resource("configmaps").Name(parentName).Do(context.Background()).Into(parent); err != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				checked++
				if owner := parent.Labels[shard.Label()]; owner != "" && owner != member {
					ahead = append(ahead, fmt.Sprintf("%s moved to %s while its parent was labelled %s (drain %q)",
						key, member, owner, parent.Labels[shard.DrainLabel()]))
				}
			}
		})
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		guard := time.Minute // simulated: many times what converging takes
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, guard)
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "b", rec) })
		awaitConverged(ctx, t, cfg, ns, 2, 2*parents, guard)

		mu.Lock()
		defer mu.Unlock()
		require.Positive(t, checked, "some children moved to b")
		require.Empty(t, ahead, "children ran ahead of their parents")
		t.Logf("%d children moved, each after its parent had left a", checked)
		requireNoOverlap(t, rec)
	})
}
