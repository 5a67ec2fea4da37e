package sharding_test

import (
	"context"
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

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// Scenario (a real Sharder, members a and b, each keying its ConfigMaps
// by ring key: runRingKeyReconcilerWith; no garbage collector, as in any
// cluster where the delete orphaned nothing yet or the collector lags;
// the sharder's PATCHes of web-env are refused (500, a webhook's hiccup)
// until api is deleted, so that its undrain of web-env comes after the
// delete, as a queue's backoff or a lagging watch would have it):
//
//   - ConfigMap api is a's, kept; its controller is Deployment top, not
//     sharded: its ring key is default/top, which the ring gives to a.
//   - ConfigMap web-env is a's and draining, a child of api (drained as
//     an orphan, then adopted by api): ring key default/api, which the
//     ring of {a, b} gives to b.
//
// a's call of default/api leaves web-env with its kept parent ("a
// drained child of a parent the member keeps ... follows its parent, and
// the sharder takes its drain back"). The sharder tries to take the drain
// back; refused. api is deleted. Now web-env is an orphan: the sharder's
// delete handler enqueues it (enqueueChildren) and decides it by the
// ring at default/api: b's, and web-env is draining on live a, so the
// sharder waits for a to let it go. But a's informer maps api's delete
// to default/top (api's ring key), whose call finds nothing under it;
// web-env does not change, so nothing brings default/api back to a.
// web-env stays draining on a for ever, and never reaches b.
//
// Promise broken: docs/16, "So either way of keying lets every drained
// object go while its member lives"; enqueueChildren's doc, "when the
// parent is deleted ... each is now decided by the ring ..., like any
// orphan" (an orphan drained on a live member moves once that member
// acknowledges).
func TestADrainedChildLeftWithAKeptParentIsLetGoOnceThatParentIsDeleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var apiDeleted atomic.Bool
		var refused atomic.Int32
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "sharder" && r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/web-env") && !apiDeleted.Load() {
				refused.Add(1)
				return fakeapiserver.Fault{Status: http.StatusInternalServerError} // its undrain lands after api's delete
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, doNothing)
		})
		r := must(sharding.NewRing(members, 0))
		a := members[0]
		b := members[1]
		top := nameOn(r, ns, "top", a)
		apiName := nameOn(r, ns, "api", b)
		shard := sharding.Shard{Ring: ring}

		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: apiName,
			Labels:          map[string]string{shard.Label(): a},
			OwnerReferences: controlledBy("Deployment", top, "deployment-top")}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(api).Do(ctx).Into(api))
		env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-env",
			Labels:          map[string]string{shard.Label(): a, shard.DrainLabel(): "true"},
			OwnerReferences: controlledByConfigMap(api)}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(env).Do(ctx).Error())
		time.Sleep(time.Second) // a's call of default/api has left web-env with its kept parent
		require.Equal(t, "true", drainLabelOf(ctx, t, c.core, shard, "web-env"), "web-env stays with its kept parent for now")

		var labels sync.Map
		startSharder(ctx, t, &wg, c.as("sharder"), ns, &labels)
		for deadline := time.Now().Add(time.Minute); refused.Load() == 0; time.Sleep(10 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the sharder never tried to take web-env's drain back")
		}
		require.NoError(t, c.core.Delete().Namespace(ns).Resource("configmaps").Name(apiName).Do(ctx).Error())
		apiDeleted.Store(true)
		time.Sleep(2 * time.Minute)

		var gotEnv corev1.ConfigMap
		require.NoError(t, c.core.Get().Namespace(ns).Resource("configmaps").Name("web-env").Do(ctx).Into(&gotEnv))
		t.Logf("a=%s b=%s; web-env labels %v; sharder PATCHes of web-env refused before the delete: %d; sharder actions: drain %d undrain %d assign %d move %d",
			a, b, gotEnv.Labels, refused.Load(), count(&labels, "drain"), count(&labels, "undrain"), count(&labels, "assign"), count(&labels, "move"))
		require.Empty(t, gotEnv.Labels[shard.DrainLabel()],
			"web-env (drained child of %s, left with it while %s kept it) is still draining on %s two minutes after its parent was deleted", apiName, a, gotEnv.Labels[shard.Label()])
		require.Equal(t, b, gotEnv.Labels[shard.Label()], "web-env, an orphan now, reaches the ring's member for default/%s", apiName)
	})
}
