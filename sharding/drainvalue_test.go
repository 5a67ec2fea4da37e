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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// A drain names the controller owner its object had when the sharder
// drained it (its UID, "orphan" for none). A member acknowledges it only
// while the object still has that controller; a stale one (the object
// adopted, orphaned or given away since) it neither acknowledges nor
// reconciles, and leaves for the sharder to drain anew or take back. A
// drain of "true", an older sharder's, is acknowledged whatever the
// controller.
func TestAStaleDrainIsNeitherAcknowledgedNorReconciledUntilTheSharderDrainsItAnew(t *testing.T) {
	shard := sharding.Shard{Ring: ring, Member: "a"}
	for _, tc := range []struct {
		name       string
		controller types.UID // "": an orphan
		drain      string
		acked      bool
	}{
		{"an orphan drained as an orphan", "", "orphan", true},
		{"a child drained for its controller", "uid-p", "uid-p", true},
		{"an orphan adopted since its drain", "uid-p", "orphan", false},
		{"a child given another parent since its drain", "uid-q", "uid-p", false},
		{"a child orphaned since its drain", "", "uid-p", false},
		{"a child drained by an older sharder", "uid-p", "true", true},
		{"an orphan drained by an older sharder", "", "true", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "obj", ResourceVersion: "12",
				Labels: map[string]string{shard.Label(): "a", shard.DrainLabel(): tc.drain}}}
			if tc.controller != "" {
				yes := true
				obj.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "p", UID: tc.controller, Controller: &yes}}
			}
			_, cms := cacheOf(t, obj)
			rec := &scriptedServer{}
			var called []informer.Key
			reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps",
				func(_ context.Context, key informer.Key) (workqueue.Result, error) {
					called = append(called, key)
					return workqueue.Result{}, nil
				})
			_, err := reconcile(t.Context(), informer.Key{Namespace: "ns", Name: "obj"})
			require.NoError(t, err)
			require.Empty(t, called, "a drained object is not reconciled, its drain stale or not")
			if tc.acked {
				require.Equal(t, []string{"/api/v1/namespaces/ns/configmaps/obj"}, rec.paths(), "its drain is acknowledged")
			} else {
				require.Empty(t, rec.paths(), "a stale drain is not acknowledged")
			}
		})
	}
}

// An object whose drain is stale is drained anew by the sharder, for the
// controller it has now: a child drained as an orphan and adopted since
// by a parent settled on another live member (decideChild, childStep),
// and a child orphaned since its drain, whose own key the ring gives to
// another member (decide). Its member lets it go then, never before, and
// it reaches the member its parent, or the ring, names. Without the new
// drain it would wait for ever: its member does not acknowledge a stale
// drain.
func TestAnObjectWhoseDrainIsStaleIsDrainedAnewAndThenMoves(t *testing.T) {
	for _, adopted := range []bool{true, false} {
		name := "a child adopted since its drain"
		if !adopted {
			name = "a child orphaned since its drain"
		}
		t.Run(name, func(t *testing.T) { staleDrainMoves(t, adopted) })
	}
}

// staleDrainMoves runs TestAnObjectWhoseDrainIsStaleIsDrainedAnewAndThenMoves:
// kid on a, drained for another controller than it has (adopted: it was
// drained as an orphan and is parent's child, parent on b; else it was
// drained as parent's child and is an orphan whose key is b's).
func staleDrainMoves(t *testing.T, adopted bool) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns := c.ns
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		shard := sharding.Shard{Ring: ring}
		run := func(ctx context.Context, s sharding.Shard) { runRingKeyReconciler(ctx, t, c.cfg, ns, s) }
		ids := startMembers(ctx, t, &wg, c.cfg, ns, []string{"a", "b"}, run)
		a, b := ids[0], ids[1]
		r := must(sharding.NewRing([]string{a, b}, 0))
		k := nameOn(r, ns, "kid", b)

		// Each version of kid, as an admin's watch sees it.
		var mu sync.Mutex
		var versions []string // kid's shard label/drain label, version by version
		events := must(c.core.Get().Namespace(ns).Resource("configmaps").Param("watch", "true").Watch(ctx))
		defer events.Stop()
		wg.Go(func() {
			for e := range events.ResultChan() {
				if cm, ok := e.Object.(*corev1.ConfigMap); ok && cm.Name == k && e.Type != watch.Deleted {
					mu.Lock()
					versions = append(versions, cm.Labels[shard.Label()]+"/"+cm.Labels[shard.DrainLabel()])
					mu.Unlock()
				}
			}
		})

		parent := c.createConfigMap(ctx, t, nameOn(r, ns, "parent", b), b, nil)
		kid := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: k,
			Labels: map[string]string{shard.Label(): a, shard.DrainLabel(): "orphan"}}} // drained as an orphan
		wantDrain := string(parent.UID)
		if adopted {
			kid.OwnerReferences = controlledByConfigMap(parent)
		} else {
			kid.Labels[shard.DrainLabel()], wantDrain = string(parent.UID), "orphan" // drained as parent's child
		}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(kid).Do(ctx).Error())
		time.Sleep(10 * time.Second) // a holds kid: its drain is stale, and no sharder runs yet
		require.Equal(t, a, labelOf(ctx, t, c.core, ns, k), "a let go of an object whose drain is stale")

		var labels sync.Map
		startSharder(ctx, t, &wg, c.as("sharder"), ns, &labels)
		c.awaitLabel(ctx, t, k, b, "kid never reached %s", b)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, []string{a + "/" + kid.Labels[shard.DrainLabel()], a + "/" + wantDrain, "/", b + "/"}, versions,
			"kid drained anew, let go by a, then given to b")
	})
}
