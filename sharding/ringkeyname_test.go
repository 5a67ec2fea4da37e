package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
)

// A member that keys its queue by ring key (EnqueueMapped with RingKey)
// gets the key "ns/web" for ConfigMap "web-env", whose controller owner,
// Deployment "web", is not sharded. When the ring moves "ns/web" away,
// the sharder drains web-env, and the drain is acknowledged under the
// owner's key. The member's cache also holds an unrelated ConfigMap
// *named* "web" (owned by Deployment "frontend"): finding it under the
// key must not hide web-env's drain, or web-env stays drained on this
// member for as long as ConfigMap "web" stays. (Found by an adversarial
// review.)
func TestADrainUnderARingKeyIsAcknowledgedWhenAnObjectHasTheOwnersName(t *testing.T) {
	shard := sharding.Shard{Ring: ring, Member: "a"}
	idx, cms := cacheOf(t,
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "10",
			Labels:          map[string]string{shard.Label(): "a"},
			OwnerReferences: controlledBy("Deployment", "frontend", "uid-frontend")}},
		drainedWebChild(shard, "web-env", "", "11"))
	rec := &scriptedServer{}

	// The key the member holds for web-env: its ring key.
	webEnv, ok := idx.Get(informer.Key{Namespace: "ns", Name: "web-env"})
	require.True(t, ok)
	key := must(informer.ParseKey(sharding.RingKey(webEnv)))
	require.Equal(t, informer.Key{Namespace: "ns", Name: "web"}, key)

	reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps", doNothing)
	_, err := reconcile(t.Context(), key)
	require.NoError(t, err)
	require.Contains(t, rec.paths(), "/api/v1/namespaces/ns/configmaps/web-env",
		"the drain of web-env, held under its ring key ns/web, was not acknowledged: Reconciler took the key for ConfigMap \"web\"")
}

// A member that keys by object may be reconciling an object when its
// drain label reaches the cache. The drain must not be acknowledged
// under its ring key meanwhile (a Reconciler call for its deleted owner's
// key, in another worker): the object would move while its old member
// still reconciled it. The ring key's call waits for that reconcile to
// end, then lets the object go.
func TestADrainIsNotAcknowledgedUnderARingKeyWhileTheObjectsOwnKeyIsReconciled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "a"}
		orphan := webChild(shard, "web-env", "", "11")
		idx, cms := cacheOf(t, orphan)
		rec := &scriptedServer{}
		own := holdKey(informer.KeyFor(orphan))
		reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps", own.reconcile)

		done := goReconcile(t.Context(), reconcile, own.key)
		<-own.entered
		require.NoError(t, idx.Update(drainedAt(shard, orphan, "12"))) // the drain label reaches the cache mid-reconcile

		ringDone := goReconcile(t.Context(), reconcile, webKey) // its ring key, in another worker
		synctest.Wait()
		require.Empty(t, rec.paths(), "the drain was acknowledged while the object's own key was being reconciled")

		close(own.release)
		require.NoError(t, <-done)
		require.NoError(t, <-ringDone)
		require.Equal(t, []string{"/api/v1/namespaces/ns/configmaps/web-env"}, rec.paths(), "the ring key's call lets it go once that reconcile ended")
	})
}

// Reconciler's doc: the object at key is acknowledged ("acknowledges its
// drain") and, last, "the drains of the objects in the cache whose ring
// key is this key, their controller owner not being in the cache";
// drainsUnder's doc: "the drains this call of key lets go of besides
// key's own object". ConfigMap "web", controlled by Deployment "web"
// (a controller that names its ConfigMap after its parent), is both the
// object at ns/web and an object whose ring key is ns/web: drainsUnder
// returns it (its controller's UID is not its own), and the call
// acknowledges it twice. The second PATCH, at the version the first
// already changed, is refused; the call then waits for its cache to
// show the relabel (spending the call's budget), and a member whose
// watch is slower than RequestTimeout reports the drain it has just
// acknowledged as a failure, retried. Passing: one PATCH, no error.
func TestADrainedObjectWhoseControllerHasItsNameIsAcknowledgedOncePerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "10",
			Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-deploy-web")}}
		_, cms := cacheOf(t, web)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				return http.StatusOK, configMapJSON(t, web) // acknowledged; the watch has not brought the relabel yet
			}
			return http.StatusConflict, conflict // at rv 10 again: the object moved on
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		returned, err := callReturnsWithin(ctx, 2*sharding.DefaultRequestTimeout, reconcile, webKey)
		require.True(t, returned)
		require.Len(t, srv.patches(), 1, "ConfigMap web was acknowledged more than once in one call: %q", srv.patches())
		require.NoError(t, err)
	})
}

// drainsUnder leaves the object at key out by its key, not its UID: an
// object with no UID is not taken for "no object at key". ConfigMap "web", controlled by Deployment "web", drained here and
// without a UID (an object from a fake or a hand-built cache: informer.Object
// does not promise one), is again returned by drainsUnder (its
// controller's UID is not "") and acknowledged twice in one call; the
// second PATCH, at the version the first changed, is refused, and a
// watch slower than the budget turns the drain just acknowledged into a
// failure. drainsUnder's doc: "besides key's own object ... that object
// itself left out: a ConfigMap "web" controlled by Deployment "web" is
// acknowledged once". Passing: one PATCH, no error.
func TestADrainedObjectAtItsRingKeyWithoutAUIDIsAcknowledgedOncePerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "10",
			Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-deploy-web")}}
		_, cms := cacheOf(t, web)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				return http.StatusOK, configMapJSON(t, web) // acknowledged; the watch has not brought the relabel yet
			}
			return http.StatusConflict, conflict
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", doNothing)
		returned, err := callReturnsWithin(ctx, 2*sharding.DefaultRequestTimeout, reconcile, webKey)
		require.True(t, returned)
		require.Len(t, srv.patches(), 1, "ConfigMap web (no UID) was acknowledged more than once in one call: %q", srv.patches())
		require.NoError(t, err)
	})
}
