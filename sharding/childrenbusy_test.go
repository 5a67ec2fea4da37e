package sharding_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// A member that keys by object (EnqueueKey) whose workers are kept busy
// by a parent's children (each reconciled under its own key, back to
// back: a busy controller, many Pods of one ReplicaSet) must still let
// the parent go when the ring gives it to another member: a ring change
// completes while the member lives ("either way of keying lets every
// drained object go while its member lives").
func TestAParentWhoseChildrenAreReconciledContinuouslyStillLeavesItsLiveMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		start := time.Now()
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runController(ctx, t, cfg, ns, shard, "configmaps", si.EnqueueKey[*corev1.ConfigMap], 3, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				if !strings.HasPrefix(key.Name, "child-") {
					return workqueue.Result{}, nil
				}
				// Each child's turn lasts up to its next boundary: child-0's
				// on whole seconds, child-1's on half seconds. Each is
				// back at once, as a busy controller's keys are.
				phase := time.Duration(0)
				if key.Name == "child-1" {
					phase = 500 * time.Millisecond
				}
				since := (time.Since(start) - phase) % time.Second
				if since < 0 {
					since += time.Second
				}
				select {
				case <-time.After(time.Second - since):
				case <-ctx.Done():
				}
				return workqueue.Result{RequeueAfter: time.Nanosecond}, nil
			})
		})
		r := must(sharding.NewRing(members, 0))
		a, b := members[0], members[1]

		// The parent and its two children on a (an earlier ring's choice).
		parent := c.createConfigMap(ctx, t, nameOn(r, ns, "parent", b), a, nil)
		for i := range 2 {
			c.createConfigMap(ctx, t, fmt.Sprintf("child-%d", i), a, parent)
		}
		time.Sleep(2 * time.Second)

		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts)
		c.awaitLabel(ctx, t, parent.Name, b, "the parent never left live member %s for %s while its children were reconciled there", a, b)
	})
}
