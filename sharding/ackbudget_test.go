package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// A call's wait for its cache after a 409 begins at the 409, not before
// its wait for the calls that may hold the object: a call of web-env's
// own key that reconciles it for longer than RequestTimeout (nothing the
// budget is meant to bound) leaves the ring key's call its whole wait.
// That reconcile wrote web-env (rv 13, still drained), which the
// member's watch brings a millisecond after the ring key's PATCH at rv
// 12 is refused: the call looks again and PATCHes at rv 13.
func TestAHolderThatReconcilesLongerThanRequestTimeoutDoesNotSpendTheWaitAfterA409(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second) // let the watch's goroutines end, whatever the verdict
		shard := sharding.Shard{Ring: ring, Member: "a"}
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-env", UID: "uid-env", ResourceVersion: "11",
			Labels:          map[string]string{shard.Label(): "a"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-web")}}
		require.NoError(t, idx.Add(env))
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
		drained := env.DeepCopy()
		drained.ResourceVersion = "12"
		drained.Labels[shard.DrainLabel()] = "true"

		own := informer.KeyFor(env)
		inReconcile, release := make(chan struct{}), make(chan struct{})
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			if n == 1 { // the own key's reconcile wrote web-env: rv 13, seen a moment later
				go func() {
					time.Sleep(time.Millisecond)
					moved := drained.DeepCopy()
					moved.ResourceVersion = "13"
					require.NoError(t, idx.Update(moved))
				}()
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps",
			func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				if key == own {
					close(inReconcile)
					<-release
				}
				return workqueue.Result{}, nil
			})

		ownDone := make(chan error, 1)
		go func() { _, err := reconcile(ctx, own); ownDone <- err }()
		<-inReconcile
		require.NoError(t, idx.Update(drained)) // the sharder drains web-env while its own key reconciles it
		ringDone := make(chan error, 1)
		go func() { _, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "web"}); ringDone <- err }()
		synctest.Wait()
		require.Empty(t, srv.patches(), "the ring key's call must wait for the own key's reconcile")
		time.Sleep(sharding.DefaultRequestTimeout + time.Second) // a slow reconcile
		close(release)
		require.NoError(t, <-ownDone)
		err := <-ringDone
		require.NoError(t, err,
			"the ring key's call, whose budget was spent waiting for the own key's reconcile, failed its 409 at once although the cache moved a millisecond later (PATCHes %q)", srv.patches())
		require.Len(t, srv.patches(), 2, "no retry at the cache's rv 13 was sent")
	})
}

// Shard.RequestTimeout's doc: it "bounds how long one call of a
// Reconciler waits, in all, for its cache to show a change a 409
// reported". A call whose key's object is itself drained, with a drained
// object of another owner under the same name (ConfigMap "web" and
// Deployment "web"'s web-env), lets both go, and with a stalled watch
// waits one RequestTimeout for both, not one each.
func TestACallWhoseOwnObjectAndAnotherAreDrainedWaitsForTheCacheOneRequestTimeoutInAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second) // let the watch's goroutines end, whatever the verdict
		shard := sharding.Shard{Ring: ring, Member: "a"}
		_, idx, cms := drainedEnv(t, shard) // web-env, controlled by Deployment web
		require.NoError(t, idx.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "20",
			Labels: map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"}}}))
		srv := &scriptedServer{}
		srv.onPatch = func(int, []byte) (int, []byte) { return http.StatusConflict, conflict } // the watch stalled
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		start := time.Now()
		returned, err := returnsWithin(ctx, sharding.DefaultRequestTimeout+time.Second, func(ctx context.Context) error {
			_, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "web"})
			return err
		})
		require.True(t, returned,
			"%v after it began, the call of web (its own ConfigMap and web-env drained, both refused) still waited for the cache: one budget per acknowledgeAll, two per call (PATCHes %d)",
			time.Since(start), len(srv.patches()))
		require.ErrorContains(t, err, "did not show the change a 409 reported")
	})
}

// No object waits on another's refusal: the first object the call
// PATCHes is refused by a webhook answering 409 every time (its cache
// never moves), and its wait spends the call's budget; the second's
// PATCH is refused because it was written just before (still drained),
// which the member's watch shows a millisecond later. The second still
// gets a look after its 409 and is acknowledged at the cache's new
// version in the same call; only the first is reported.
func TestALaterObjectsWaitAfterA409IsNotSpentByAnEarlierObjectsRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second) // let the watch's goroutines end, whatever the verdict
		shard := sharding.Shard{Ring: ring, Member: "a"}
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		objs := map[string]*corev1.ConfigMap{}
		for _, o := range []struct{ name, rv string }{{"web-a", "20"}, {"web-b", "30"}} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: o.name, UID: types.UID("uid-" + o.name), ResourceVersion: o.rv,
				Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
				OwnerReferences: controlledBy("Deployment", "web", "uid-web")}}
			objs[o.rv] = cm
			require.NoError(t, idx.Add(cm))
		}
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
		var refused, second *corev1.ConfigMap // the first PATCHed, refused for ever; the other
		srv := &scriptedServer{}
		srv.onPatch = func(n int, body []byte) (int, []byte) {
			cm := objs[patchedRV(t, body)]
			switch {
			case n == 1:
				refused = cm
				return http.StatusConflict, conflict // a webhook refuses it, always
			case cm == refused:
				return http.StatusConflict, conflict
			case cm != nil && second == nil: // written just before; the watch brings it now
				second = cm
				go func() {
					time.Sleep(time.Millisecond)
					moved := cm.DeepCopy()
					moved.ResourceVersion = "99"
					require.NoError(t, idx.Update(moved))
				}()
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, second)
		}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		returned, err := returnsWithin(ctx, 2*sharding.DefaultRequestTimeout, func(ctx context.Context) error {
			_, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "web"})
			return err
		})
		require.True(t, returned)
		require.NotNil(t, second, "the second object was never PATCHed: %q", srv.patches())
		require.ErrorContains(t, err, refused.Name, "the refused object's 409 is a failure, retried")
		require.NotContains(t, err.Error(), second.Name,
			"%s's 409, whose change the cache showed a millisecond later, failed at once because %s's refusal had spent the call's budget (PATCHes %q)",
			second.Name, refused.Name, srv.patches())
		require.Len(t, srv.patches(), 3, "%s was not retried at the cache's rv 99: %q", second.Name, srv.patches())
	})
}
