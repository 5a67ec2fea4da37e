package sharding_test

import (
	"context"
	"errors"
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

// withOthers keeps the key coming back for another object's
// failed acknowledgement when the key's own reconcile says Terminal, but
// not when it panics: the panic unwinds through the Reconciler, the
// joined KeepRetrying failure is lost, and a queue with MaxRetries gives
// the key up as any panicking key. web-env then stays draining on this
// member, with nothing left to bring its key back (the promise of
// Reconciler's doc: "the key is retried (even if its own outcome is
// Terminal) and no object waits on another's refusal").
func TestAPanickingReconcileStillRetriesAnotherObjectsFailedAcknowledgementUnderACappedRetryQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := runEnvMember(t, func(n int32) bool { return n <= 6 }, // a transient fault
			func(context.Context, informer.Key) (workqueue.Result, error) {
				panic("a bug in the reconcile of ConfigMap web")
			}, workqueue.RunOptions[informer.Key]{MaxRetries: 5, OnError: func(informer.Key, error) {}})

		time.Sleep(time.Minute)
		require.Empty(t, m.envDrainLabel(t),
			"web-env is still draining a minute after its acknowledgement was refused 6 times: web's panic gave the key up (%d PATCHes of web-env, %d keys given up)",
			m.patches.Load(), m.queue.GaveUp())
	})
}

// a deferred acknowledgement brings its key back "within 100
// ms" (comeBack) only when the key's own reconcile succeeds. When it
// fails, the error wins over the Result, and the key comes back at its
// rate limiter's backoff, which has grown on every retry while the drain
// waited (5 ms doubling, up to 1000 s). Here ConfigMap web's reconcile
// fails (a dependency is down); web-env, re-parented from Deployment
// "old" to Deployment "web" while ConfigMap old's key (which held it as
// it began) is reconciled, is drained. Its acknowledgement under web is
// held back until old's call ends, rightly; but once it has ended, web-env
// stays draining until web's next backoff, tens of seconds later,
// not 100 ms.
func TestADeferredAcknowledgementComesBackSoonEvenWhenTheKeysOwnReconcileFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		admin := must(testenv.CoreV1Client(net.Config()))
		mine := map[string]string{shard.Label(): shard.Member}
		for _, cm := range []*corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "old", Labels: mine}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: mine}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-env", Labels: mine,
				OwnerReferences: controlledBy("Deployment", "old", "deployment-old")}},
		} {
			require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
		}
		letGo, began := make(chan struct{}), make(chan struct{})
		var once sync.Once
		runByRingKey(t, ctx, net, shard,
			func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				switch key.Name {
				case "old":
					once.Do(func() {
						close(began)
						select {
						case <-letGo:
						case <-ctx.Done():
						}
					})
				case "web":
					return workqueue.Result{}, errors.New("a dependency of web is down")
				}
				return workqueue.Result{}, nil
			}, workqueue.RunOptions[informer.Key]{Workers: 2, OnError: func(informer.Key, error) {}})
		receive(t, began, time.Minute)

		// Re-parented to Deployment web, and drained, while old's call runs.
		require.NoError(t, admin.Patch(types.MergePatchType).Namespace("default").Resource("configmaps").Name("web-env").
			Body([]byte(`{"metadata":{"labels":{"`+shard.DrainLabel()+`":"true"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"deployment-web","controller":true}]}}`)).
			Do(ctx).Error())
		draining := func() bool { return drainLabelOf(ctx, t, admin, shard, "web-env") != "" }
		time.Sleep(time.Minute)
		require.True(t, draining(), "held back while old's call, which held web-env as it began, runs")

		close(letGo)
		time.Sleep(time.Second) // ten times comeBack's 100 ms
		require.False(t, draining(),
			"web-env is still draining a second after the call that held it ended: its key, web, comes back at the backoff of web's own failures, not within 100 ms")
	})
}

// the retries a KeepRetrying failure earns its key count against
// MaxRetries all the same, so the key's own reconcile, once the other
// object's acknowledgement is through, has no retry left: its first
// transient failure is given up at once (OnError gets a *RetryLimitError
// "giving up after 6 retries", the default log says so at level Error,
// and Queue.GaveUp, the listwatch_workqueue_gave_up_total metric, counts
// one more), though web's own reconcile failed once. Here web-env's
// delete event (it left the cache) happens to bring web back, so the
// harm is the false give-up, not a lost reconcile.
func TestAKeysOwnFailureAfterAnotherObjectsRefusedAcknowledgementsIsStillRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls, reconciled := 0, false
		var gaveUp []error
		m := runEnvMember(t, func(n int32) bool { return n <= 6 }, // a transient fault
			func(context.Context, informer.Key) (workqueue.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls == 7 { // the call whose pass let web-env go: one transient failure of web's own
					return workqueue.Result{}, errors.New("the object has been modified; please apply your changes to the latest version")
				}
				reconciled = true
				return workqueue.Result{}, nil
			}, workqueue.RunOptions[informer.Key]{MaxRetries: 5, OnError: func(_ informer.Key, err error) {
				if _, ok := errors.AsType[*workqueue.RetryLimitError](err); ok {
					mu.Lock()
					gaveUp = append(gaveUp, err)
					mu.Unlock()
				}
			}})

		time.Sleep(time.Minute)
		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, calls, 7)
		require.Empty(t, gaveUp, "web's first own failure was given up at once, its budget spent on web-env's refused acknowledgements (web-env's ack PATCHes: %d; web's reconciles: %d, rerun by web-env's delete event and succeeded: %v)", m.patches.Load(), calls, reconciled)
	})
}

// the call that records web-env as held ("what a reconcile of
// key may touch": every object of this member whose ring key is the key)
// acknowledges web-env's drain in that same pass, and then calls the
// reconcile of the key, web. A member that keys by ring key reconciles
// an owner's key with everything under it (runRingKeyReconcilerWith), so
// web's reconcile runs with web-env already let go: the sharder may give
// it to its next member, which reconciles it while this one still does.
// (Pre-existing in a659fa5; the new hold makes the contradiction
// explicit: inFlight holds back the drain from every other call but not
// from the one about to reconcile it.)
func TestADrainUnderARingKeyIsNotLetGoBeforeThatKeysOwnReconcileRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		net := fakeapiserver.ServeInMemory(fakeapiserver.New())
		t.Cleanup(net.Close)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		createWebAndDrainingEnv(t, ctx, net, shard)
		admin := must(testenv.CoreV1Client(net.Config()))
		var during map[string]string // web-env's labels on the server while web's reconcile runs
		reconcile, _ := memberReconciler(t, ctx, net, shard,
			func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				var env corev1.ConfigMap
				require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("web-env").Do(ctx).Into(&env))
				during = env.Labels
				return workqueue.Result{}, nil
			})
		_, err := reconcile(ctx, informer.Key{Namespace: "default", Name: "web"})
		require.NoError(t, err)
		require.Equal(t, shard.Member, during[shard.Label()],
			"web-env (ring key default/web) was let go before the reconcile of default/web ran: its labels then were %v", during)
	})
}
