package sharding_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// Scenario (member m1 keying its ConfigMaps by ring key, runByRingKey;
// labels written by hand, as the sharder would; no garbage collector):
//
//   - ConfigMap api is m1's, kept; its controller is Deployment top, not
//     sharded: its ring key is default/top.
//   - ConfigMap kid is m1's and draining, a child of api (drained as an
//     orphan, then adopted): ring key default/api.
//
// default/api's call leaves kid with its kept parent and records it
// under api's ring key then, default/top (keepChildren). api is then
// adopted by Deployment top2 (another controller takes it over; its
// ring key is now default/top2; the ring keeps it on m1), and later
// deleted. Its delete brings default/top2, where nothing is recorded:
// the record stays under default/top, which nothing brings any more;
// kid does not change, so nothing brings default/api either. kid stays
// draining on m1 for ever.
//
// Promise broken: Reconciler's doc, "a drained child of a parent this
// member keeps stays with it: the sharder takes its drain back, or, if
// the parent is deleted first, the call its delete brings lets the child
// go (keptChildren)". Passing means kid's drain is acknowledged after
// api's delete.
func TestAKeptChildIsLetGoOnceItsParentIsDeletedAfterItsParentsRingKeyChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		ctx := t.Context()
		admin := must(testenv.CoreV1Client(net.Config()))
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api",
			Labels:          map[string]string{shard.Label(): "m1"},
			OwnerReferences: controlledBy("Deployment", "top", "deployment-top")}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(api).Do(ctx).Into(api))
		kid := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kid",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledByConfigMap(api)}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(kid).Do(ctx).Error())

		runByRingKey(t, ctx, net, shard, doNothing, workqueue.RunOptions[informer.Key]{Workers: 2})
		time.Sleep(time.Second) // default/api's call has left kid with its kept parent
		require.Equal(t, "true", drainLabelOf(ctx, t, admin, shard, "kid"), "kid stays with its kept parent for now")

		// Deployment top2 takes api over: its ring key is default/top2.
		require.NoError(t, admin.Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("api").
			Body([]byte(`{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"top2","uid":"deployment-top2","controller":true}]}}`)).Do(ctx).Error())
		time.Sleep(time.Second)
		require.Equal(t, "true", drainLabelOf(ctx, t, admin, shard, "kid"), "kid stays with its kept parent for now")
		require.NoError(t, admin.Delete().Namespace("default").Resource("configmaps").Name("api").Do(ctx).Error())

		time.Sleep(10 * time.Minute)
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "kid"),
			"kid, drained and left with its kept parent api, is still draining on m1 ten minutes after api (whose ring key had become default/top2) was deleted")
	})
}

// Scenario as TestAnOwedChildIsStillLetGoWhenTheOwingKeysReconcilePanics,
// for a kept child rather than an owed one (member m1 keying by ring
// key, runByRingKey, MaxRetries 3):
//
//   - ConfigMap web is m1's, kept; its reconcile panics (a bug in the
//     user's code for that one object).
//   - ConfigMap api is m1's, kept; its controller is Deployment "web",
//     not sharded: its ring key is default/web, web's key too.
//   - ConfigMap kid is m1's and draining, a child of api: ring key
//     default/api.
//
// default/api's call leaves kid with api, recorded under default/web
// (keepChildren). api is deleted; its delete brings default/web. That
// call finds nothing drained under default/web and nothing owed, so
// reconcileRecovered runs web's reconcile with recovering false: it
// panics straight through the Reconciler, and letGo — and so payKept —
// never runs. After MaxRetries the key is given up; kid stays draining
// on m1 for ever (nothing brings default/web or default/api again).
//
// Promise broken: Reconciler's doc ("if the parent is deleted first,
// the call its delete brings lets the child go (keptChildren)"; "... so
// the key is retried (even if its own outcome is ... a panic, or the
// queue's MaxRetries is spent) and no object waits on another's
// refusal"), as it is kept for owed children. Passing means kid's drain
// is acknowledged after api's delete.
func TestAKeptChildIsStillLetGoWhenItsParentsRingKeysReconcilePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		ctx := t.Context()
		admin := must(testenv.CoreV1Client(net.Config()))
		web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web",
			Labels: map[string]string{shard.Label(): "m1"}}}
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api",
			Labels:          map[string]string{shard.Label(): "m1"},
			OwnerReferences: controlledBy("Deployment", "web", "deployment-web")}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(web).Do(ctx).Error())
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(api).Do(ctx).Into(api))
		kid := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kid",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledByConfigMap(api)}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(kid).Do(ctx).Error())

		var mu sync.Mutex
		var failures []string
		reconcile := func(_ context.Context, key informer.Key) (workqueue.Result, error) {
			if key.Name == "web" {
				panic("web's reconcile has a bug")
			}
			return workqueue.Result{}, nil
		}
		queue := runByRingKey(t, ctx, net, shard, reconcile, workqueue.RunOptions[informer.Key]{Workers: 2, MaxRetries: 3,
			OnError: func(key informer.Key, err error) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, key.String()+": "+strings.SplitN(err.Error(), "\n", 2)[0])
			}})
		time.Sleep(time.Second) // default/api's call has left kid with its kept parent
		require.Equal(t, "true", drainLabelOf(ctx, t, admin, shard, "kid"), "kid stays with its kept parent for now")

		require.NoError(t, admin.Delete().Namespace("default").Resource("configmaps").Name("api").Do(ctx).Error())

		time.Sleep(10 * time.Minute)
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "kid"),
			"kid, left with its kept parent api, is still draining on m1 ten minutes after api was deleted: default/web's reconcile panicked before letGo paid it (gave up: %d; failures: %q)",
			queue.GaveUp(), failures)
	})
}
