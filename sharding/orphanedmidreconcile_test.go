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

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// The mirror of TestAnAdoptedChildLeavesItsLiveMemberOnlyByADrain: a
// member that keys by ring key reconciles a child under its parent's key.
// If the child is orphaned (its controller reference removed: a
// ReplicaSet releasing a Pod) while that reconcile runs, its ring key
// becomes its own, which the ring may place on another member. The old
// member's reconcile of the parent's key, which began with the child in
// it, is still running: the child must not reach the other member before
// it has ended ("so no two members reconcile one object at once").
func TestAChildOrphanedWhileItsParentsKeyIsReconciledDoesNotReachAnotherMemberMidReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		letGo := make(chan struct{})
		began := make(chan string, 4)
		var holdOnce sync.Once
		var mu sync.Mutex
		var parentName string
		var held bool // a's reconcile of the parent's key is running
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				mu.Lock()
				p := parentName
				mu.Unlock()
				if key.Name != p {
					return workqueue.Result{}, nil
				}
				holdOnce.Do(func() {
					mu.Lock()
					held = true
					mu.Unlock()
					began <- shard.Member
					select {
					case <-letGo:
					case <-ctx.Done():
					}
					mu.Lock()
					held = false
					mu.Unlock()
				})
				return workqueue.Result{}, nil
			})
		})
		r := must(sharding.NewRing(members, 0))
		var name string
		for i := 0; ; i++ {
			name = fmt.Sprintf("parent-%d", i)
			if r.Owner(ns+"/"+name) != r.Owner(ns+"/child") {
				break
			}
		}
		mu.Lock()
		parentName = name
		mu.Unlock()
		isController := true
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: parent.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(child).Do(ctx).Error())

		type labelling struct {
			action, member string
			whileHeld      bool
		}
		labelled := make(chan labelling, 16)
		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts, func(sc *sharding.SharderConfig) {
			sc.OnLabel = func(action string, key informer.Key, member string) {
				if key.Name == "child" {
					mu.Lock()
					h := held
					mu.Unlock()
					labelled <- labelling{action, member, h}
				}
			}
		})
		guard := time.Minute
		holder := receive(t, began, guard)
		require.Equal(t, r.Owner(ns+"/"+name), holder)
		require.Equal(t, holder, labelOf(ctx, t, c.core, ns, "child"), "the child sits with its parent")
		for len(labelled) > 0 {
			<-labelled // its assignment with the parent
		}

		// The child is orphaned while its parent's key is reconciled.
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("child").
			Body([]byte(`{"metadata":{"ownerReferences":null}}`)).Do(ctx).Error())

		time.Sleep(10 * time.Second) // simulated: the drain, its acknowledgement and the move all fit many times
		mu.Lock()
		stillHeld := held
		mu.Unlock()
		require.True(t, stillHeld)
		other := r.Owner(ns + "/child")
		var steps []labelling
		for len(labelled) > 0 {
			steps = append(steps, <-labelled)
		}
		require.NotEqual(t, other, labelOf(ctx, t, c.core, ns, "child"),
			"the orphaned child reached %s while %s still reconciled its parent's key, which began with the child in it (sharder's steps: %+v)", other, holder, steps)
		close(letGo)
	})
}

// The same with a sharded new parent: a child re-parented (its controller
// reference moved from one sharded parent to another: a Pod released by
// one ReplicaSet and adopted by another) while its old parent's key is
// reconciled by a member that keys by ring key. The sharder drains it
// toward the new parent's member (decideChild), and the old member
// acknowledges under the new parent's key, which it is not working on;
// but its reconcile of the old parent's key, begun with the child in it,
// still runs. The child must not reach the new parent's member first.
func TestAChildReparentedWhileItsOldParentsKeyIsReconciledDoesNotReachTheNewParentsMemberMidReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		letGo := make(chan struct{})
		began := make(chan string, 4)
		var holdOnce sync.Once
		var mu sync.Mutex
		var oldName string
		held := false
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				mu.Lock()
				p := oldName
				mu.Unlock()
				if key.Name != p {
					return workqueue.Result{}, nil
				}
				holdOnce.Do(func() {
					mu.Lock()
					held = true
					mu.Unlock()
					began <- shard.Member
					select {
					case <-letGo:
					case <-ctx.Done():
					}
					mu.Lock()
					held = false
					mu.Unlock()
				})
				return workqueue.Result{}, nil
			})
		})
		r := must(sharding.NewRing(members, 0))
		var oldP, newP string
		for i := 0; oldP == "" || newP == ""; i++ {
			name := fmt.Sprintf("rs-%d", i)
			switch r.Owner(ns + "/" + name) {
			case members[0]:
				if oldP == "" {
					oldP = name
				}
			case members[1]:
				if newP == "" {
					newP = name
				}
			}
		}
		mu.Lock()
		oldName = oldP
		mu.Unlock()
		isController := true
		p1 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: oldP, Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(p1).Do(ctx).Into(p1))
		p2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: newP, Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(p2).Do(ctx).Into(p2))
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: oldP, UID: p1.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(child).Do(ctx).Error())

		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts)
		holder := receive(t, began, time.Minute)
		require.Equal(t, members[0], holder)
		require.Equal(t, holder, labelOf(ctx, t, c.core, ns, "pod"), "the child sits with its old parent")

		// Re-parented while its old parent's key is reconciled.
		adopt := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`, newP, p2.UID)
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("pod").
			Body([]byte(adopt)).Do(ctx).Error())

		time.Sleep(10 * time.Second) // simulated: the drain, its acknowledgement and the move all fit many times
		mu.Lock()
		stillHeld := held
		mu.Unlock()
		require.True(t, stillHeld)
		require.NotEqual(t, members[1], labelOf(ctx, t, c.core, ns, "pod"),
			"the re-parented child reached %s (its new parent's member) while %s still reconciled its old parent's key, which began with the child in it", members[1], holder)
		close(letGo)
	})
}
