package sharding_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// Scenario (member m1 keys by ring key, EnqueueMapped with RingKey, one
// resource; a real informer and queue over the in-memory API server):
//
//   - ConfigMap api is m1's and draining; its controller is Deployment
//     top, not sharded, so its ring key is default/top.
//   - ConfigMap web-env is m1's and draining; its controller is
//     Deployment web, not sharded: ring key default/web.
//
// The call of default/web acknowledges web-env. Just before its PATCH
// reaches the server, web-env is adopted by ConfigMap api (a Pod moving
// to another ReplicaSet): the PATCH gets 409. acknowledge waits for the
// cache, sees web-env still m1's and draining, and stillUnder says its
// ring key is now default/api, not the call's: "A cache that shows
// another state ... leaves it to that change's event, which brings the
// key back". The event brings default/api; but ConfigMap api is in the
// cache (its own acknowledgement is on its way, a second in flight), so
// drainsUnder leaves web-env out (its controller is the object at the
// key), and the call acknowledges api only. api leaves the cache; its
// delete maps to its ring key default/top, not default/api. Nothing
// brings default/api back, and web-env stays draining on m1 for ever.
// (The sharder does not undrain it either: web-env is now a child of
// api, which is draining, then unlabelled: decideChild leaves it where
// it is, and moveChildren waits for it, so api is never assigned.)
//
// Promise broken: Reconciler's doc, "Every object leaves a live member by
// a drain ... Either way of keying lets every drained object of this
// lister's resource go"; docs/16, "So either way of keying lets every
// drained object go while its member lives"; acknowledge's doc, "leaves
// it to that change's event, which brings the key back".
func TestAChildAdoptedBetweenTriesByADrainingParentWhoseRingKeyIsAnothersIsStillLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		var envPatches atomic.Int32
		var adopt func()
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method != http.MethodPatch {
				return fakeapiserver.Fault{}
			}
			switch {
			case strings.HasSuffix(r.URL.Path, "/web-env"):
				if envPatches.Add(1) == 1 {
					adopt() // just before m1's first acknowledgement of web-env is served
				}
			case strings.HasSuffix(r.URL.Path, "/api"):
				return fakeapiserver.Fault{Latency: time.Second} // api's acknowledgements take a second
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		ctx := t.Context()
		admin := must(testenv.CoreV1Client(net.Config()))
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "top", "deployment-top")}}
		env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "web", "deployment-web")}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(api).Do(ctx).Into(api))
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(env).Do(ctx).Error())
		adopt = func() {
			patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"api","uid":%q,"controller":true}]}}`, api.UID)
			require.NoError(t, admin.Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("web-env").
				Body([]byte(patch)).Do(ctx).Error())
		}

		var mu sync.Mutex
		var failures []string
		runByRingKey(t, ctx, net, shard, doNothing, workqueue.RunOptions[informer.Key]{Workers: 2,
			OnError: func(key informer.Key, err error) {
				mu.Lock()
				defer mu.Unlock()
				failures = append(failures, key.String()+": "+err.Error())
			}})

		time.Sleep(time.Minute)
		var got corev1.ConfigMap
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("web-env").Do(ctx).Into(&got))
		require.Equal(t, "api", metav1.GetControllerOf(&got).Name, "web-env was adopted by ConfigMap api")
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "api"), "api's own drain was acknowledged")
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, got.Labels[shard.DrainLabel()],
			"web-env, adopted by draining ConfigMap api (ring key default/top) between its acknowledgement's tries, is still draining on m1 a minute later (labels %v; PATCHes of web-env: %d; failures: %q)",
			got.Labels, envPatches.Load(), failures)
	})
}

// The same without a 409 (drainsUnder's rule left out every child of the
// object at the key, draining or not): web-env was adopted by ConfigMap api after the
// sharder drained it, and api, whose controller is Deployment top (not
// sharded: ring key default/top), was drained too (the ring moved
// default/top), before m1's first look at either. default/api's call
// finds api in its cache and leaves web-env out (its controller is the
// object at the key); api is let go; its delete maps to default/top, so
// default/api never comes back, and web-env stays draining on m1. (The
// sharder leaves it there too: its parent api is draining, then
// unlabelled, and moveChildren waits for it.)
//
// Promise broken: docs/16, "So either way of keying lets every drained
// object go while its member lives".
func TestAChildOfADrainingParentWhoseRingKeyIsAnothersIsLetGoUnderARingKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/api") {
				return fakeapiserver.Fault{Latency: time.Second} // api's acknowledgements take a second
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		ctx := t.Context()
		admin := must(testenv.CoreV1Client(net.Config()))
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "top", "deployment-top")}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(api).Do(ctx).Into(api))
		env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env",
			Labels:          map[string]string{shard.Label(): "m1", shard.DrainLabel(): "true"},
			OwnerReferences: controlledByConfigMap(api)}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(env).Do(ctx).Error())

		runByRingKey(t, ctx, net, shard, doNothing, workqueue.RunOptions[informer.Key]{Workers: 2, OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "api"), "api's own drain was acknowledged")
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "web-env"),
			"web-env, child of draining ConfigMap api (ring key default/top), is still draining on m1 a minute after api was let go")
	})
}

// The own-key analogue of
// TestARetryAfterA409DoesNotLetGoAChildAdoptedMeanwhileByAParentThisMemberReconciles
// (a member keying by ring key, one resource): orphan web-env (no
// controller: ring key ns/web-env, its own) is drained on member a; the
// call of ns/web-env acknowledges it (letGoOwn). Its PATCH at rv 12 is
// refused: meanwhile web-env was adopted by ConfigMap api, a parent this
// member owns and reconciles (rv 13, still a's and drained; the cache
// shows it). letGoOwn's retry checks nothing but UID and labels (still is
// always true), finds no call of ns/api, and PATCHes at rv 13; the
// adoption's event brings ns/api, whose call begins as that PATCH goes out
// and reconciles with web-env in it while web-env leaves the member.
//
// Promise (as 824d0db's own test reads it): docs/16, "a child must never
// reach a new member while the old member still owns its parent: the old
// member, finding the child gone from its cache mid-reconcile, may create
// it again" — here web-env leaves the member that owns its parent, in the
// middle of that parent's reconcile (the sharder would take the drain
// back: api is a's and not draining).
func TestARetryAfterA409UnderItsOwnKeyDoesNotLetGoAChildAdoptedMeanwhileByAParentThisMemberReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "uid-api", ResourceVersion: "5",
			Labels: map[string]string{shard.Label(): "a"}}}
		drained := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-env", UID: "uid-env", ResourceVersion: "12",
			Labels: map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"}}}
		require.NoError(t, idx.Add(api))
		require.NoError(t, idx.Add(drained))
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))

		apiKey := informer.KeyFor(api)
		var reconcile workqueue.ReconcileFunc[informer.Key]
		inAPI, release := make(chan struct{}), make(chan struct{})
		apiDone := make(chan error, 1)
		reconcilingWhenLetGo := false
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			if n == 1 { // adopted by api meanwhile (rv 13), still drained here; the cache shows it
				adopted := drained.DeepCopy()
				adopted.ResourceVersion = "13"
				adopted.OwnerReferences = controlledByConfigMap(api)
				require.NoError(t, idx.Update(adopted))
				return http.StatusConflict, conflict
			}
			// The adoption's event brought ns/api: its call begins.
			go func() { _, err := reconcile(ctx, apiKey); apiDone <- err }()
			select {
			case <-inAPI:
				reconcilingWhenLetGo = true
			case <-time.After(time.Second):
			}
			return http.StatusOK, configMapJSON(t, drained)
		}
		reconcile = sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps",
			func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				if key == apiKey { // reconciles api with its children, web-env among them
					close(inAPI)
					<-release
				}
				return workqueue.Result{}, nil
			})
		_, err := reconcile(ctx, informer.KeyFor(drained))
		close(release)
		if len(srv.patches()) > 1 {
			require.NoError(t, <-apiDone)
		}
		require.NoError(t, err)
		require.False(t, reconcilingWhenLetGo,
			"web-env, adopted by ConfigMap api (reconciled here under ns/api) between tries, was let go under its own key while ns/api's call reconciled it (PATCHes %q)",
			srv.patches())
	})
}
