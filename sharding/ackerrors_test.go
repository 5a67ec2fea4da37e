package sharding_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sync"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// refusingEnvPatches is a server that answers 500 to a PATCH of web-env
// while refuse says so, counting them.
func refusingEnvPatches(refuse func(n int32) bool) (*fakeapiserver.InMemory, *atomic.Int32) {
	var patches atomic.Int32
	return fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/web-env") && refuse(patches.Add(1)) {
			return fakeapiserver.Fault{Status: http.StatusInternalServerError}
		}
		return fakeapiserver.Fault{}
	})), &patches
}

// createWebAndDrainingEnv creates ConfigMap web, the shard's, and
// ConfigMap web-env, the shard's and draining, whose controller is a
// Deployment "web" that is not sharded: web-env's ring key is
// default/web, the ConfigMap's key too.
func createWebAndDrainingEnv(t *testing.T, ctx context.Context, net *fakeapiserver.InMemory, shard sharding.Shard) {
	t.Helper()
	admin := must(testenv.CoreV1Client(net.Config()))
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web",
		Labels: map[string]string{shard.Label(): shard.Member}}}
	env := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env",
		Labels:          map[string]string{shard.Label(): shard.Member, shard.DrainLabel(): "true"},
		OwnerReferences: controlledBy("Deployment", "web", "deployment-web")}}
	for _, cm := range []*corev1.ConfigMap{web, env} {
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
	}
}

// memberReconciler is sharding.Reconciler around reconcile for shard's
// ConfigMaps in default on net, over shard's informer of them
// (memberInformer), synced when it returns, and returned too. ctx must
// end when the test does (t.Context or one made from it): the factory is
// waited for as the test ends.
func memberReconciler(t *testing.T, ctx context.Context, net *fakeapiserver.InMemory, shard sharding.Shard, reconcile workqueue.ReconcileFunc[informer.Key]) (workqueue.ReconcileFunc[informer.Key], *si.Informer[*corev1.ConfigMap]) {
	t.Helper()
	factory, cms := memberInformer(t, ctx, net, shard)
	t.Cleanup(factory.Wait)
	return sharding.Reconciler(shard, cms.Lister(), must(factory.RESTClient(corev1.SchemeGroupVersion)), "configmaps", reconcile), cms
}

// runByRingKey runs, until ctx ends, shard's controller of the
// ConfigMaps in default on net: a queue that gets every object of the
// shard under its ring key (byRingKey), one of the two ways Reconciler's
// doc allows, and workqueue.Run with opts giving each key to
// memberReconciler around reconcile. It returns, once the informer has
// synced, the queue (for GaveUp), which is shut down as the test ends.
// ctx is as memberReconciler's.
func runByRingKey(t *testing.T, ctx context.Context, net *fakeapiserver.InMemory, shard sharding.Shard, reconcile workqueue.ReconcileFunc[informer.Key], opts workqueue.RunOptions[informer.Key]) *workqueue.Queue[informer.Key] {
	t.Helper()
	reconcile, cms := memberReconciler(t, ctx, net, shard, reconcile)
	queue := workqueue.New(workqueue.Options[informer.Key]{})
	t.Cleanup(queue.ShutDown)
	must(cms.AddEventHandler(byRingKey(queue)))
	go workqueue.Run(ctx, queue, reconcile, opts)
	return queue
}

// envMember is member m1 of the test ring with ConfigMap web and a
// draining web-env under it (createWebAndDrainingEnv), both keyed
// default/web, on a server that refuses web-env's PATCHes while refuse
// says so (refusingEnvPatches): a drain whose acknowledgement fails for
// another object than the key's own.
type envMember struct {
	shard   sharding.Shard
	admin   *rest.RESTClient               // the test's own client of the server
	patches *atomic.Int32                  // PATCHes of web-env so far, refused or not
	queue   *workqueue.Queue[informer.Key] // the member's queue
}

// runEnvMember creates that scene and runs m1's controller of it until
// the test ends: runByRingKey with reconcile as web's own and opts. It
// returns once the member's informer has synced; the server closes when
// the test ends, after the member has stopped.
func runEnvMember(t *testing.T, refuse func(n int32) bool, reconcile workqueue.ReconcileFunc[informer.Key], opts workqueue.RunOptions[informer.Key]) *envMember {
	t.Helper()
	net, patches := refusingEnvPatches(refuse)
	t.Cleanup(net.Close)
	m := &envMember{shard: sharding.Shard{Ring: ring, Member: "m1"}, admin: must(testenv.CoreV1Client(net.Config())), patches: patches}
	createWebAndDrainingEnv(t, t.Context(), net, m.shard)
	m.queue = runByRingKey(t, t.Context(), net, m.shard, reconcile, opts)
	return m
}

// envDrainLabel is web-env's drain label on the server ("" once its
// drain is acknowledged).
func (m *envMember) envDrainLabel(t *testing.T) string {
	t.Helper()
	return drainLabelOf(t.Context(), t, m.admin, m.shard, "web-env")
}

// drainLabelOf reads the ConfigMap default/name's drain label of shard
// from the API server.
func drainLabelOf(ctx context.Context, t *testing.T, admin *rest.RESTClient, shard sharding.Shard, name string) string {
	t.Helper()
	var got corev1.ConfigMap
	require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name(name).Do(ctx).Into(&got))
	return got.Labels[shard.DrainLabel()]
}

// An acknowledgement that fails for another object under the same key
// (a webhook that refuses web-env's PATCH, say) does not keep the
// object at the key from its reconcile: the reconcile runs, and the
// failure is still returned, so the key is retried.
func TestAFailedAcknowledgementOfAnotherObjectDoesNotStarveTheKeysOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		net, _ := refusingEnvPatches(func(int32) bool { return true })
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		reconciled := 0
		reconcile, _ := memberReconciler(t, ctx, net, shard,
			func(context.Context, informer.Key) (workqueue.Result, error) {
				reconciled++
				return workqueue.Result{}, nil
			})
		_, err := reconcile(ctx, informer.Key{Namespace: "default", Name: "web"})
		require.ErrorContains(t, err, "acknowledging the drain of default/web-env", "the failure is returned, so the key is retried")
		require.Equal(t, 1, reconciled, "ConfigMap web, at the key, is reconciled all the same")
	})
}

// A key whose own reconcile says Terminal (no retry can help web) is
// still retried while another object's acknowledgement under it fails:
// otherwise the queue gives the key up and web-env stays draining on
// this member, with nothing left to bring its key back.
func TestATerminalReconcileStillRetriesAnotherObjectsFailedAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runEnvMember(t, func(n int32) bool { return n == 1 }, // one transient failure
			func(context.Context, informer.Key) (workqueue.Result, error) {
				return workqueue.Result{}, workqueue.Terminal(errors.New("web's spec is invalid"))
			}, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.GreaterOrEqual(t, m.patches.Load(), int32(2), "web-env's acknowledgement was refused once and tried again")
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after one failed acknowledgement: web's Terminal gave the key up (%d PATCHes of web-env)", m.patches.Load())
	})
}

// Scenario: web's own reconcile returns Terminal around a typed nil
// (var err *apierrors.StatusError; return Terminal(err)), which
// workqueue.Run survives, while web-env's acknowledgement under the same
// key is refused twice. withOthers must not read the Terminal-marked
// typed nil's text itself (it would panic inside the reconcile: Run
// would recover a *PanicError, not a KeepRetrying error, and with
// MaxRetries give the key up, web-env still draining on this member).
//
// Reconciler's doc: "The last step's failures (a PATCH refused or timed
// out) are returned together with the key's own outcome, marked
// workqueue.KeepRetrying, so the key is retried (even if its own outcome
// is Terminal, or a panic, or the queue's MaxRetries is spent)"; Run's:
// "an error holding a typed nil ..., itself or wrapped, marked or
// joined, is an error that says so, with the same mark, not a crash".
func TestATerminalTypedNilReconcileStillRetriesAnotherObjectsFailedAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported []error
		m := runEnvMember(t, func(n int32) bool { return n <= 2 }, // two transient failures
			func(context.Context, informer.Key) (workqueue.Result, error) {
				var typedNil *apierrors.StatusError
				return workqueue.Result{}, workqueue.Terminal(typedNil)
			}, workqueue.RunOptions[informer.Key]{MaxRetries: 1, OnError: func(_ informer.Key, err error) { reported = append(reported, err) }})

		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after two failed acknowledgements (%d PATCHes of web-env); OnError got %q", m.patches.Load(), reported)
	})
}

// Scenario: web's own reconcile returns the classic typed nil bare (var
// err *url.Error; ...; return Result{}, err: not == nil), while web-env's
// acknowledgement under the same key is refused twice (a webhook's
// hiccup). withOthers looks for a Terminal mark in web's error
// (errors.AsType) inside the reconcile, outside any recover: errors.As
// calls (*url.Error)(nil).Unwrap, which panics. Run recovers a
// *PanicError, not a KeepRetrying error, and under MaxRetries gives the
// key up: web-env stays draining on this member, nothing bringing its
// key back. (c77c8b4 made withOthers read the text of a Terminal-marked
// own error lazily, but the mark's search itself still walks the error.)
//
// Promise broken: Reconciler's doc, "The last step's failures ... are
// returned together with the key's own outcome, marked
// workqueue.KeepRetrying, so the key is retried (even if its own outcome
// is Terminal, or a panic, or the queue's MaxRetries is spent)"; Run's
// doc, "an error that panics when read (a typed nil ...) is replaced by
// one that says so, with the Terminal or KeepRetrying mark Run could
// still see".
func TestATypedNilWhoseUnwrapPanicsStillRetriesAnotherObjectsFailedAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported []string
		m := runEnvMember(t, func(n int32) bool { return n <= 2 }, // two transient failures
			func(context.Context, informer.Key) (workqueue.Result, error) {
				var typedNil *url.Error
				return workqueue.Result{}, typedNil
			}, workqueue.RunOptions[informer.Key]{MaxRetries: 1, OnError: func(_ informer.Key, err error) {
				reported = append(reported, strings.SplitN(err.Error(), "\n", 2)[0])
			}})

		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after two failed acknowledgements (%d PATCHes of web-env; keys given up: %d); OnError got %q",
			m.patches.Load(), m.queue.GaveUp(), reported)
	})
}

// The same with the typed nil panicked with rather than returned (`if
// err != nil { panic(err) }`): Reconciler's own reconcileRecovered (used
// while another object is drained under the key) keeps the typed nil as
// the *PanicError's Err (workqueue's newPanicError, since c77c8b4, does
// not), and withOthers's search for a Terminal mark walks into it and
// panics inside the reconcile. Reconciler's doc: "... marked
// workqueue.KeepRetrying, so the key is retried (even if its own outcome
// is Terminal, or a panic, or the queue's MaxRetries is spent)".
func TestAReconcileThatPanicsWithATypedNilStillRetriesAnotherObjectsFailedAcknowledgement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reported []string
		m := runEnvMember(t, func(n int32) bool { return n <= 2 }, // two transient failures
			func(context.Context, informer.Key) (workqueue.Result, error) {
				var typedNil *url.Error
				panic(typedNil)
			}, workqueue.RunOptions[informer.Key]{MaxRetries: 1, OnError: func(_ informer.Key, err error) {
				reported = append(reported, strings.SplitN(err.Error(), "\n", 2)[0])
			}})

		time.Sleep(time.Minute)
		synctest.Wait()
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after two failed acknowledgements (%d PATCHes of web-env; keys given up: %d); OnError got %q",
			m.patches.Load(), m.queue.GaveUp(), reported)
	})
}

// Scenario (runEnvMember: m1 keys by ring key; ConfigMap web, kept, and
// web-env, draining, under default/web; no PATCH refused): web's
// reconcile panics with a typed nil (var err *url.Error; ...; panic(err)).
// The call has a drain to let go after it, so the Reconciler recovers the
// panic itself (reconcileRecovered) and, unlike Run's newPanicError, keeps
// the typed nil as the *PanicError's Err (p.Err, _ = v.(error)). web-env
// is let go, nothing else failed, and withOthers returns that *PanicError
// as it is; Run's readable then finds that errors.As panics inside it
// (the typed nil's Unwrap) and replaces the whole by "workqueue:
// reconcile returned an error (a *workqueue.PanicError) that panics when
// read": OnError gets no *PanicError, and the default log reports a
// returned error at Warn, without the panic's stack, not a panic at Error.
//
// Promise broken: Run's doc, "a panic: recovered, reported to OnError as
// a *PanicError"; docs/07, "a panic with one is a *PanicError that does
// not hold it"; the Reconciler's reconcileRecovered, "turns a panic into
// the *workqueue.PanicError Run would have made of it".
func TestAReconcileThatPanicsWithATypedNilWhileADrainIsLetGoReachesOnErrorAsAPanicError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []error
		m := runEnvMember(t, func(int32) bool { return false },
			func(_ context.Context, key informer.Key) (workqueue.Result, error) {
				if key.Name == "web" {
					var typedNil *url.Error
					panic(typedNil)
				}
				return workqueue.Result{}, nil
			}, workqueue.RunOptions[informer.Key]{OnError: func(_ informer.Key, err error) {
				mu.Lock()
				defer mu.Unlock()
				reported = append(reported, err)
			}})
		time.Sleep(time.Second)
		synctest.Wait()
		require.Empty(t, m.envDrainLabel(t), "web-env was let go")
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, reported)
		var p *workqueue.PanicError
		require.True(t, errors.As(reported[0], &p), "web's reconcile panicked, and OnError got %q, not a *workqueue.PanicError", reported[0])
	})
}

// Scenario (member a; cache held by hand; a scripted server): ConfigMap
// web is a's and kept; web-env, a's and drained, is a child of Deployment
// web (not sharded), so its ring key is ns/web too. A webhook refuses
// web-env's acknowledgement (500). web's reconcile panics with a Terminal
// error (panic(workqueue.Terminal(err)): "this spec can never work").
// Because a drain waits under ns/web, the Reconciler recovers the panic
// itself into workqueue.NewPanicError(v) — "as Run would" — but then
// withOthers sees a Terminal mark inside the *PanicError and wraps it in
// unmarked{}, which wraps nothing: the error Run gets, and hands to
// OnError unchanged, holds no *PanicError (errors.As finds none). The same
// panic with no drain under the key reaches OnError as a *PanicError
// (Run recovers it), and the default log then logs it at Error with its
// stack; here it is a Warn with no stack.
//
// Promise broken: "OnError gets a *PanicError for a panic" (Run's doc, "a
// panic: recovered, reported to OnError as a *PanicError");
// reconcileRecovered's doc, "turns a panic into the *workqueue.PanicError
// Run would have made of it".
func TestATerminalPanicUnderAKeyWithAFailedDrainReachesOnErrorAsAPanicError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	shard := sharding.Shard{Ring: ring, Member: "a"}
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "5",
		Labels: map[string]string{shard.Label(): "a"}}}
	_, cms := cacheOf(t, web, drainedWebChild(shard, "web-env", "uid-env", "12"))
	srv := &scriptedServer{}
	srv.onPatch = func(int, []byte) (int, []byte) { return http.StatusInternalServerError, webhookHiccup }
	reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps",
		func(context.Context, informer.Key) (workqueue.Result, error) {
			panic(workqueue.Terminal(errors.New("spec.replicas: this spec can never work")))
		})
	_, err := reconcile(ctx, webKey)
	require.Error(t, err)
	require.Len(t, srv.paths(), 1, "web-env's acknowledgement was tried")
	_, ok := errors.AsType[*workqueue.PanicError](err)
	require.True(t, ok, "the panic reaches Run (and OnError) as no *PanicError: %T %q", err, err)
}

// The same with the panic recovered by the reconcile itself and returned
// marked Terminal (workqueue.Terminal(workqueue.NewPanicError(v)), a mark
// Run's doc says holds, "a mark put around a panic the reconcile
// recovered itself is a mark it returned"): withOthers drops the mark,
// as its doc says, and with it the panic, wrapped in unmarked{}, which
// wrapped nothing. The same error with no failed drain under the key
// reaches OnError holding its *PanicError.
func TestAReturnedTerminalPanicUnderAKeyWithAFailedDrainReachesOnErrorAsAPanicError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	shard := sharding.Shard{Ring: ring, Member: "a"}
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "5",
		Labels: map[string]string{shard.Label(): "a"}}}
	_, cms := cacheOf(t, web, drainedWebChild(shard, "web-env", "uid-env", "12"))
	srv := &scriptedServer{}
	srv.onPatch = func(int, []byte) (int, []byte) { return http.StatusInternalServerError, webhookHiccup }
	reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps",
		func(context.Context, informer.Key) (workqueue.Result, error) {
			return workqueue.Result{}, workqueue.Terminal(workqueue.NewPanicError(errors.New("index out of range")))
		})
	_, err := reconcile(ctx, webKey)
	require.Error(t, err)
	require.Len(t, srv.paths(), 1, "web-env's acknowledgement was tried")
	_, ok := errors.AsType[*workqueue.PanicError](err)
	require.True(t, ok, "the recovered panic reaches Run (and OnError) as no *PanicError: %T %q", err, err)
	_, terminal := errors.AsType[*workqueue.TerminalError](err)
	require.False(t, terminal, "the key's own Terminal mark is dropped while another object's drain failed")
}

// A reconcile that returns a typed nil *workqueue.PanicError (a nil
// pointer in the error interface) under a key whose other drain failed:
// the reconcile returns an error marked KeepRetrying, so that the other
// object's acknowledgement is retried past MaxRetries; it does not panic.
func TestATypedNilPanicErrorUnderAKeyWithAFailedDrainIsNotAPanic(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	shard := sharding.Shard{Ring: ring, Member: "a"}
	web := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-cm-web", ResourceVersion: "5",
		Labels: map[string]string{shard.Label(): "a"}}}
	_, cms := cacheOf(t, web, drainedWebChild(shard, "web-env", "uid-env", "12"))
	srv := &scriptedServer{}
	srv.onPatch = func(int, []byte) (int, []byte) { return http.StatusInternalServerError, webhookHiccup }
	reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps",
		func(context.Context, informer.Key) (workqueue.Result, error) {
			var p *workqueue.PanicError
			return workqueue.Result{}, p
		})
	var err error
	require.NotPanics(t, func() { _, err = reconcile(ctx, webKey) }, "the sharding Reconciler panicked")
	require.Error(t, err)
	_, keep := errors.AsType[*workqueue.KeepRetryingError](err)
	require.True(t, keep, "the other object's failed acknowledgement is no longer retried past MaxRetries: %T", err)
}
