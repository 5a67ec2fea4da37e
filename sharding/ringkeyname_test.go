package sharding_test

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// patchRecorder is an httptest stand-in for the API server that answers
// every PATCH with 200 {} and records its path.
type patchRecorder struct {
	mu      sync.Mutex
	patched []string
	bodies  [][]byte
}

// client is a client of the recorder over the in-memory network, so
// that it works inside a synctest bubble (create it there).
func (p *patchRecorder) client(t *testing.T) *rest.RESTClient {
	srv := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPatch {
			p.mu.Lock()
			p.patched = append(p.patched, r.URL.Path)
			p.bodies = append(p.bodies, body)
			p.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`))
	}))
	t.Cleanup(srv.Close)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	cfg := srv.Config()
	cfg.ContentConfig = rest.ContentConfig{GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion()}
	cfg.APIPath = "/api"
	return must(rest.RESTClientFor(cfg))
}

// body returns the i-th PATCH's body.
func (p *patchRecorder) body(i int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bodies[i]
}

func (p *patchRecorder) paths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.patched...)
}

func controlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

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
	idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
	require.NoError(t, idx.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "10",
		Labels:          map[string]string{shard.Label(): "a"},
		OwnerReferences: controlledBy("Deployment", "frontend", "uid-frontend")}}))
	require.NoError(t, idx.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-env", ResourceVersion: "11",
		Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
		OwnerReferences: controlledBy("Deployment", "web", "uid-web")}}))
	cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
	rec := &patchRecorder{}

	// The key the member holds for web-env: its ring key.
	webEnv, ok := idx.Get(informer.Key{Namespace: "ns", Name: "web-env"})
	require.True(t, ok)
	key := must(informer.ParseKey(sharding.RingKey(webEnv)))
	require.Equal(t, informer.Key{Namespace: "ns", Name: "web"}, key)

	reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps",
		func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
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
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-env", ResourceVersion: "11",
			Labels:          map[string]string{shard.Label(): "a"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-web")}}
		require.NoError(t, idx.Add(orphan))
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
		rec := &patchRecorder{}
		inReconcile, letGo := make(chan struct{}), make(chan struct{})
		reconcile := sharding.Reconciler(shard, cms, rec.client(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) {
				close(inReconcile)
				<-letGo
				return workqueue.Result{}, nil
			})

		own := informer.KeyFor(orphan)
		done := make(chan error, 1)
		go func() { _, err := reconcile(t.Context(), own); done <- err }()
		<-inReconcile
		drained := orphan.DeepCopy()
		drained.ResourceVersion, drained.Labels[shard.DrainLabel()] = "12", "true"
		require.NoError(t, idx.Update(drained)) // the drain label reaches the cache mid-reconcile

		ringDone := make(chan error, 1)
		go func() { // its ring key, in another worker
			_, err := reconcile(t.Context(), informer.Key{Namespace: "ns", Name: "web"})
			ringDone <- err
		}()
		synctest.Wait()
		require.Empty(t, rec.paths(), "the drain was acknowledged while the object's own key was being reconciled")

		close(letGo)
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
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "10",
			Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-deploy-web")}}
		require.NoError(t, idx.Add(web))
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				return http.StatusOK, configMapJSON(t, web) // acknowledged; the watch has not brought the relabel yet
			}
			return http.StatusConflict, conflict // at rv 10 again: the object moved on
		}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		returned, err := returnsWithin(ctx, 2*sharding.DefaultRequestTimeout, func(ctx context.Context) error {
			_, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "web"})
			return err
		})
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
		idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
		web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "10",
			Labels:          map[string]string{shard.Label(): "a", shard.DrainLabel(): "true"},
			OwnerReferences: controlledBy("Deployment", "web", "uid-deploy-web")}}
		require.NoError(t, idx.Add(web))
		cms := must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
		srv := &scriptedServer{}
		srv.onPatch = func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				return http.StatusOK, configMapJSON(t, web) // acknowledged; the watch has not brought the relabel yet
			}
			return http.StatusConflict, conflict
		}
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps",
			func(context.Context, informer.Key) (workqueue.Result, error) { return workqueue.Result{}, nil })
		returned, err := returnsWithin(ctx, 2*sharding.DefaultRequestTimeout, func(ctx context.Context) error {
			_, err := reconcile(ctx, informer.Key{Namespace: "ns", Name: "web"})
			return err
		})
		require.True(t, returned)
		require.Len(t, srv.patches(), 1, "ConfigMap web (no UID) was acknowledged more than once in one call: %q", srv.patches())
		require.NoError(t, err)
	})
}
