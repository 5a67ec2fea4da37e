package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// A member that keys by ring key lets go, under the key default/web of
// an unsharded Deployment, the drained ConfigMap web-env it controls,
// and then web-env's two drained children, whose ring key is web-env's.
// The call has a deadline of its own (a wrapper's per-call timeout), and
// it passes while the first child's PATCH hangs. That child is owed
// under default/web and let go when the key comes back; the second was
// skipped, and nothing else brings a key that finds it: web-env has left
// the cache, its delete brought default/web, and the child does not
// change. It stayed drained here for good, and web-env, whose next
// member waits for its children, with it.
//
// Passing: the key's next call lets both children go.
func TestChildrenLeftUnacknowledgedWhenACallsDeadlinePassesAreLetGoWhenItsKeyComesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		var hung atomic.Bool
		net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/env-child-") && hung.CompareAndSwap(false, true) {
				return fakeapiserver.Fault{Hang: true} // the first child's, until the call's deadline
			}
			return fakeapiserver.Fault{}
		}))
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		admin := must(testenv.CoreV1Client(net.Config()))
		drained := map[string]string{shard.Label(): shard.Member, shard.DrainLabel(): "true"}
		env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env", Labels: drained,
			OwnerReferences: controlledBy("Deployment", "web", "deployment-web")}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(env).Do(ctx).Into(env))
		for _, name := range []string{"env-child-1", "env-child-2"} {
			child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: drained,
				OwnerReferences: controlledByConfigMap(env)}}
			require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(child).Do(ctx).Error())
		}
		reconcile, _ := memberReconciler(t, ctx, net, shard, doNothing)
		web := informer.Key{Namespace: "default", Name: "web"}

		callCtx, cancel := context.WithTimeout(ctx, time.Second) // the call's own deadline
		_, err := reconcile(callCtx, web)
		cancel()
		require.Error(t, err, "a child's PATCH hung past the call's deadline: the key is retried")
		require.Empty(t, drainLabelOf(ctx, t, admin, shard, "web-env"), "web-env was let go")
		time.Sleep(time.Second) // the cache has seen web-env leave
		synctest.Wait()

		_, err = reconcile(ctx, web) // the key comes back
		require.NoError(t, err)
		for _, name := range []string{"env-child-1", "env-child-2"} {
			require.Empty(t, drainLabelOf(ctx, t, admin, shard, name),
				"%s, a drained child of web-env, which was let go, is still drained after its key came back: the call whose deadline passed skipped it and owed it nowhere", name)
		}
	})
}
