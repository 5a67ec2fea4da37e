package sharding_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// scriptedServer is an in-memory stand-in for the API server whose
// PATCH answers a test scripts: 200 and a ConfigMap, unless onPatch says
// otherwise. It records every PATCH's path and body. Make it, and its
// clients, inside the test's synctest bubble if it has one.
type scriptedServer struct {
	mu      sync.Mutex
	patched []string // the PATCHes' paths
	bodies  [][]byte
	onPatch func(n int, body []byte) (status int, resp []byte) // n counts from 1
}

// client is a client of s, throttled as client-go's default (5 QPS).
func (s *scriptedServer) client(t *testing.T) *rest.RESTClient {
	return must(rest.RESTClientFor(s.config(t)))
}

// unthrottled is a client of s without client-go's default client-side
// rate limit, so that a call's time is its own waits, not the limiter's.
func (s *scriptedServer) unthrottled(t *testing.T) *rest.RESTClient {
	cfg := s.config(t)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	return must(rest.RESTClientFor(cfg))
}

func (s *scriptedServer) config(t *testing.T) *rest.Config {
	srv := fakeapiserver.ServeInMemory(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		status, resp := http.StatusOK, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)
		if r.Method == http.MethodPatch {
			s.mu.Lock()
			s.patched = append(s.patched, r.URL.Path)
			s.bodies = append(s.bodies, body)
			n := len(s.bodies)
			s.mu.Unlock()
			if s.onPatch != nil {
				status, resp = s.onPatch(n, body)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	cfg := srv.Config()
	cfg.ContentConfig = rest.ContentConfig{GroupVersion: &corev1.SchemeGroupVersion, NegotiatedSerializer: serializer.NewCodecFactory(scheme).WithoutConversion()}
	cfg.APIPath = "/api"
	return cfg
}

// patches returns the PATCHes' bodies so far.
func (s *scriptedServer) patches() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.bodies {
		out = append(out, string(b))
	}
	return out
}

// paths returns the PATCHes' paths so far.
func (s *scriptedServer) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.patched...)
}

// body returns the i-th PATCH's body.
func (s *scriptedServer) body(i int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[i]
}

// patchedRV is the resourceVersion an acknowledgement's PATCH is guarded by.
func patchedRV(t *testing.T, body []byte) string {
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &p))
	return p.Metadata.ResourceVersion
}

var conflict = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,"message":"the object has been modified"}`)

// refuseAll is an onPatch that refuses every PATCH with 409.
func refuseAll(int, []byte) (int, []byte) { return http.StatusConflict, conflict }

func configMapJSON(t *testing.T, cm *corev1.ConfigMap) []byte {
	cm = cm.DeepCopy()
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	b, err := json.Marshal(cm)
	require.NoError(t, err)
	return b
}

// webKey is ns/web: the key of ConfigMap web, and the ring key of the
// web-* ConfigMaps that Deployment web (never in the cache) controls.
var webKey = informer.Key{Namespace: "ns", Name: "web"}

func controlledBy(kind, name string, uid types.UID) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &yes}}
}

// webChild is ConfigMap ns/name (uid, at rv), shard's member's, whose
// controller is Deployment web (uid-web): its ring key is webKey.
func webChild(shard sharding.Shard, name string, uid types.UID, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv,
		Labels:          map[string]string{shard.Label(): shard.Member},
		OwnerReferences: controlledBy("Deployment", "web", "uid-web")}}
}

// drainedWebChild is webChild with the drain label: the sharder moves it.
func drainedWebChild(shard sharding.Shard, name string, uid types.UID, rv string) *corev1.ConfigMap {
	return drainedAt(shard, webChild(shard, name, uid, rv), rv)
}

// drainedAt is a copy of cm at rv with shard's drain label.
func drainedAt(shard sharding.Shard, cm *corev1.ConfigMap, rv string) *corev1.ConfigMap {
	cm = cm.DeepCopy()
	cm.ResourceVersion, cm.Labels[shard.DrainLabel()] = rv, "true"
	return cm
}

// cacheOf is a member's cache holding objs: the index behind it (to
// change as the member's watch would) and its lister.
func cacheOf(t *testing.T, objs ...*corev1.ConfigMap) (*indexer.Indexer[*corev1.ConfigMap], *lister.Lister[*corev1.ConfigMap]) {
	t.Helper()
	idx := must(indexer.New(indexer.Options[*corev1.ConfigMap]{}))
	for _, cm := range objs {
		require.NoError(t, idx.Add(cm))
	}
	return idx, must(lister.New(idx, schema.GroupResource{Resource: "configmaps"}))
}

// drainedEnv is web-env, this member's (a) and drained, at rv 12, in a
// fresh cache; the lister and the index behind it.
func drainedEnv(t *testing.T, shard sharding.Shard) (*corev1.ConfigMap, *indexer.Indexer[*corev1.ConfigMap], *lister.Lister[*corev1.ConfigMap]) {
	t.Helper()
	drained := drainedWebChild(shard, "web-env", "uid-env", "12")
	idx, cms := cacheOf(t, drained)
	return drained, idx, cms
}

// cacheShows puts a copy of cm at rv in idx: the member's watch brings a
// write of cm.
func cacheShows(t *testing.T, idx *indexer.Indexer[*corev1.ConfigMap], cm *corev1.ConfigMap, rv string) {
	moved := cm.DeepCopy()
	moved.ResourceVersion = rv
	require.NoError(t, idx.Update(moved))
}

// cacheShowsAfter is cacheShows, d from now, in a goroutine of its own:
// a watch that brings the write a moment after the 409 that reported it.
func cacheShowsAfter(t *testing.T, d time.Duration, idx *indexer.Indexer[*corev1.ConfigMap], cm *corev1.ConfigMap, rv string) {
	go func() {
		time.Sleep(d)
		cacheShows(t, idx, cm, rv)
	}()
}

// keyHold is a reconcile that, called for key, closes entered and
// returns only once release is closed (a call of key mid-reconcile);
// for any other key it does nothing.
type keyHold struct {
	key              informer.Key
	entered, release chan struct{}
}

func holdKey(key informer.Key) *keyHold {
	return &keyHold{key: key, entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *keyHold) reconcile(_ context.Context, key informer.Key) (workqueue.Result, error) {
	if key == h.key {
		close(h.entered)
		<-h.release
	}
	return workqueue.Result{}, nil
}

// goReconcile starts a call of reconcile for key in a goroutine of its
// own; the call's error arrives on the channel returned.
func goReconcile(ctx context.Context, reconcile workqueue.ReconcileFunc[informer.Key], key informer.Key) <-chan error {
	done := make(chan error, 1)
	go func() { _, err := reconcile(ctx, key); done <- err }()
	return done
}

// callReturnsWithin is returnsWithin of one call of reconcile for key.
func callReturnsWithin(ctx context.Context, d time.Duration, reconcile workqueue.ReconcileFunc[informer.Key], key informer.Key) (bool, error) {
	return returnsWithin(ctx, d, func(ctx context.Context) error {
		_, err := reconcile(ctx, key)
		return err
	})
}

// runQueueOf runs workqueue.Run of reconcile with opts, until ctx ends,
// over a new queue that holds key; it returns the queue (shut down as
// the test ends) and a channel closed once Run has returned.
func runQueueOf(t *testing.T, ctx context.Context, reconcile workqueue.ReconcileFunc[informer.Key], opts workqueue.RunOptions[informer.Key], key informer.Key) (*workqueue.Queue[informer.Key], <-chan struct{}) {
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	t.Cleanup(queue.ShutDown)
	queue.Add(key)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		workqueue.Run(ctx, queue, reconcile, opts)
	}()
	return queue, ran
}

// An acknowledgement's second try, after a 409, waits again for the calls
// that may be reconciling the object. Between the ring key's wait and the
// 409, the sharder took the drain back (web-env undrained, rv 13), the
// member's cache saw it, and the object's own key began a reconcile of
// it, as it should: web-env is this member's again; then drained it once
// more (rv 14), which the cache shows when the retry looks. No PATCH may
// let it go while that reconcile runs.
func TestAnAcknowledgementRetriedAfterA409WaitsForACallThatBeganReconcilingTheObjectMeanwhile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)

		var reconcile workqueue.ReconcileFunc[informer.Key]
		own := holdKey(informer.KeyFor(drained))
		ownDone := make(chan error, 1)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n != 1 {
				return http.StatusOK, configMapJSON(t, drained)
			}
			// Meanwhile: the drain taken back (rv 13), seen by the
			// cache; the own key's call begins and reconciles web-env.
			undrained := drained.DeepCopy()
			undrained.ResourceVersion = "13"
			delete(undrained.Labels, shard.DrainLabel())
			require.NoError(t, idx.Update(undrained))
			go func() { _, err := reconcile(ctx, own.key); ownDone <- err }()
			<-own.entered
			cacheShows(t, idx, drained, "14") // and drained once more
			return http.StatusConflict, conflict
		}}
		reconcile = sharding.Reconciler(shard, cms, srv.client(t), "configmaps", own.reconcile)

		ringDone := goReconcile(ctx, reconcile, webKey)
		defer func() { // end both calls, whatever the verdict
			close(own.release)
			<-ownDone
			<-ringDone
		}()
		synctest.Wait()
		require.Len(t, srv.patches(), 1,
			"web-env was acknowledged (PATCHes %q) while a call of its own key was reconciling it: the PATCH after the 409 did not wait for it", srv.patches())
	})
}

// An acknowledgement retried after a 409 lets go only the object whose
// drain was waited for: web-env deleted and made again under its name (a
// new UID, another owner), labelled for this member and drained, is not
// acknowledged by a call that waited only for the old one's holders.
func TestAnAcknowledgementRetriedAfterA409DoesNotLetGoAnObjectOfAnotherUID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained := drainedWebChild(shard, "web-env", "uid-old", "12")
		idx, cms := cacheOf(t, drained)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 { // meanwhile deleted and made again, drained here: the cache sees it
				made := drained.DeepCopy()
				made.UID, made.ResourceVersion = "uid-new", "30"
				made.OwnerReferences = controlledBy("Deployment", "api", "uid-api")
				require.NoError(t, idx.Update(made))
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		_, err := reconcile(t.Context(), webKey)
		require.NoError(t, err)
		require.Len(t, srv.patches(), 1,
			"after a 409, web-env of UID uid-new (not the object whose drain was waited for) was acknowledged: %q", srv.patches())
	})
}

// Scenario (a member keying by ring key, EnqueueMapped with RingKey, one
// resource): web-env, controlled by Deployment web (not in this cache),
// is drained on member a; the call of its ring key ns/web acknowledges
// it. Its PATCH at rv 12 is refused: meanwhile web-env was adopted by
// ConfigMap api, a sharded parent this member owns and reconciles (rv 13,
// still labelled a and drained; the cache shows it). acknowledge's retry
// checks only UID, shard label and drain label, so it PATCHes at rv 13
// under ns/web, a key that no longer holds web-env: by drainsUnder's own
// rule a drained object whose controller is the object at its ring key is
// not let go under that key. wait(now) found no call of ns/api, but the
// adoption's event brings ns/api, whose call begins as the retry's PATCH
// goes out: it reads web-env, drained but still api's child, and its
// reconcile runs with web-env in it while web-env leaves the member.
//
// Promises broken: Reconciler's doc, "A drain is acknowledged under a key
// the member holds for the object"; inFlight's doc, "A call that begins
// later reads a cache in which the object is already drained, so only
// calls in progress can hold a drain back" (a ring key's call reconciles
// with its drained children in the cache); docs/16, "a child must never
// reach a new member while the old member still owns its parent: the old
// member, finding the child gone from its cache mid-reconcile, may create
// it again". Passing: the retry does not let go under ns/web an object
// whose ring key is now another's (it leaves it to that change's event),
// or nothing lets it go while ns/api's call reconciles it.
func TestARetryAfterA409DoesNotLetGoAChildAdoptedMeanwhileByAParentThisMemberReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		api := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "uid-api", ResourceVersion: "5",
			Labels: map[string]string{shard.Label(): "a"}}}
		drained := drainedWebChild(shard, "web-env", "uid-env", "12")
		idx, cms := cacheOf(t, api, drained)

		var reconcile workqueue.ReconcileFunc[informer.Key]
		inAPI := holdKey(informer.KeyFor(api)) // reconciles api with its children, web-env among them
		apiDone := make(chan error, 1)
		reconcilingWhenLetGo := false
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 { // adopted by api meanwhile (rv 13), still drained here; the cache shows it
				adopted := drained.DeepCopy()
				adopted.ResourceVersion = "13"
				adopted.OwnerReferences = controlledByConfigMap(api)
				require.NoError(t, idx.Update(adopted))
				return http.StatusConflict, conflict
			}
			// The adoption's event brought ns/api: its call begins.
			go func() { _, err := reconcile(ctx, inAPI.key); apiDone <- err }()
			select {
			case <-inAPI.entered:
				reconcilingWhenLetGo = true
			case <-time.After(time.Second):
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile = sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", inAPI.reconcile)
		_, err := reconcile(ctx, webKey)
		close(inAPI.release)
		if len(srv.patches()) > 1 {
			require.NoError(t, <-apiDone)
		}
		require.NoError(t, err)
		require.False(t, reconcilingWhenLetGo || len(srv.patches()) > 1,
			"web-env, adopted by ConfigMap api (reconciled here under ns/api) between tries, was let go under ns/web (PATCHes %q; ns/api's call reconciling it as it left: %v)",
			srv.patches(), reconcilingWhenLetGo)
	})
}
