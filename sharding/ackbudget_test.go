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

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
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
		env := webChild(shard, "web-env", "uid-env", "11")
		idx, cms := cacheOf(t, env)
		drained := drainedAt(shard, env, "12")

		own := holdKey(informer.KeyFor(env))
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 { // the own key's reconcile wrote web-env: rv 13, seen a moment later
				cacheShowsAfter(t, time.Millisecond, idx, drained, "13")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", own.reconcile)

		ownDone := goReconcile(ctx, reconcile, own.key)
		<-own.entered
		require.NoError(t, idx.Update(drained)) // the sharder drains web-env while its own key reconciles it
		ringDone := goReconcile(ctx, reconcile, webKey)
		synctest.Wait()
		require.Empty(t, srv.patches(), "the ring key's call must wait for the own key's reconcile")
		time.Sleep(sharding.DefaultRequestTimeout + time.Second) // a slow reconcile
		close(own.release)
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
		srv := &scriptedServer{onPatch: refuseAll} // the watch stalled
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		start := time.Now()
		returned, err := callReturnsWithin(ctx, sharding.DefaultRequestTimeout+time.Second, reconcile, webKey)
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
		webA, webB := drainedWebChild(shard, "web-a", "uid-web-a", "20"), drainedWebChild(shard, "web-b", "uid-web-b", "30")
		objs := map[string]*corev1.ConfigMap{"20": webA, "30": webB}
		idx, cms := cacheOf(t, webA, webB)
		var refused, second *corev1.ConfigMap // the first PATCHed, refused for ever; the other
		srv := &scriptedServer{onPatch: func(n int, body []byte) (int, []byte) {
			cm := objs[patchedRV(t, body)]
			switch {
			case n == 1:
				refused = cm
				return http.StatusConflict, conflict // a webhook refuses it, always
			case cm == refused:
				return http.StatusConflict, conflict
			case cm != nil && second == nil: // written just before; the watch brings it now
				second = cm
				cacheShowsAfter(t, time.Millisecond, idx, cm, "99")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, second)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		returned, err := callReturnsWithin(ctx, 2*sharding.DefaultRequestTimeout, reconcile, webKey)
		require.True(t, returned)
		require.NotNil(t, second, "the second object was never PATCHed: %q", srv.patches())
		require.ErrorContains(t, err, refused.Name, "the refused object's 409 is a failure, retried")
		require.NotContains(t, err.Error(), second.Name,
			"%s's 409, whose change the cache showed a millisecond later, failed at once because %s's refusal had spent the call's budget (PATCHes %q)",
			second.Name, refused.Name, srv.patches())
		require.Len(t, srv.patches(), 3, "%s was not retried at the cache's rv 99: %q", second.Name, srv.patches())
	})
}
