package sharding_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/workqueue"
)

// hangingServer is a fake API server, in a synctest bubble, whose
// requests of one method hang (never answer until the client gives up)
// while hang is set: a stalled server, or a connection gone quiet.
func hangingServer(t *testing.T, method string) (*fakeapiserver.InMemory, *atomic.Bool) {
	t.Helper()
	var hang atomic.Bool
	net := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(fakeapiserver.New(), func(r *http.Request) fakeapiserver.Fault {
		return fakeapiserver.Fault{Hang: hang.Load() && r.Method == method}
	}))
	t.Cleanup(net.Close)
	return net, &hang
}

// memberInformer starts a factory's ConfigMap informer scoped to shard,
// over net, and waits for it to sync; the caller cancels ctx, then
// waits for the factory.
func memberInformer(t *testing.T, ctx context.Context, net *fakeapiserver.InMemory, shard sharding.Shard) (*si.Factory, *si.Informer[*corev1.ConfigMap]) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	factory := must(si.NewFactory(net.Config(), si.FactoryOptions{Scheme: scheme, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	cms := must(si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace("default"), si.WithLabels(shard.Selector())))
	factory.Start(ctx)
	require.NoError(t, factory.WaitForCacheSync(ctx))
	return factory, cms
}

// returnsWithin runs call and reports whether it returned within d of
// simulated time, and its error; a call still waiting is cancelled.
func returnsWithin(ctx context.Context, d time.Duration, call func(context.Context) error) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	time.Sleep(d)
	select {
	case err := <-done:
		return true, err
	default:
		cancel()
		<-done
		return false, nil
	}
}

// A drain's acknowledgement sent to a server that never answers gives up
// within the shard's request timeout and fails, so the workqueue retries
// the key; it does not hold the worker, and the object, forever. In the
// simulator (sharded seed 1) one such PATCH, sent during a hang fault,
// kept an object from its new owner until the run ended.
func TestAnAcknowledgementThatHangsGivesUpWithinTheRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		net, hang := hangingServer(t, http.MethodPatch)
		shard := sharding.Shard{Ring: ring, Member: "m1"}
		admin := must(testenv.CoreV1Client(net.Config()))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a",
			Labels: map[string]string{shard.Label(): shard.Member, shard.DrainLabel(): "true"}}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())

		reconcile, _ := memberReconciler(t, ctx, net, shard,
			func(context.Context, informer.Key) (workqueue.Result, error) {
				t.Error("a draining object was reconciled")
				return workqueue.Result{}, nil
			})
		key := informer.Key{Namespace: "default", Name: "a"}
		call := func(ctx context.Context) error { _, err := reconcile(ctx, key); return err }

		hang.Store(true)
		returned, err := returnsWithin(ctx, sharding.DefaultRequestTimeout+time.Second, call)
		require.True(t, returned, "the acknowledgement still waited on the hung PATCH after %v", sharding.DefaultRequestTimeout)
		require.ErrorContains(t, err, "acknowledging the drain of default/a")

		hang.Store(false)
		returned, err = returnsWithin(ctx, time.Second, call)
		require.True(t, returned)
		require.NoError(t, err)
		var got corev1.ConfigMap
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("a").Do(ctx).Into(&got))
		require.Empty(t, got.Labels, "the retried acknowledgement removes both labels")
	})
}

// The acknowledgement's timeout is timed on the shard's Clock, as every
// other wait of a member is on its MemberConfig.Clock: a test's fake
// clock, or the simulator's paused or skewed one, decides when it gives
// up. Here the clock is stepped past the request timeout while the
// PATCH hangs; the acknowledgement gives up at once, not after the
// timeout on the bubble's own clock.
func TestAnAcknowledgementTimesItsRequestOnTheShardsClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		net, hang := hangingServer(t, http.MethodPatch)
		clock := workqueue.NewFakeClock(time.Now())
		shard := sharding.Shard{Ring: ring, Member: "m1", Clock: clock}
		admin := must(testenv.CoreV1Client(net.Config()))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a",
			Labels: map[string]string{shard.Label(): shard.Member, shard.DrainLabel(): "true"}}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
		reconcile, _ := memberReconciler(t, ctx, net, shard, doNothing)

		hang.Store(true)
		done := goReconcile(ctx, reconcile, informer.Key{Namespace: "default", Name: "a"})
		synctest.Wait() // the PATCH hangs
		clock.Step(sharding.DefaultRequestTimeout)
		returned, err := returnsWithin(ctx, time.Millisecond, func(context.Context) error { return <-done })
		require.True(t, returned, "the acknowledgement still waited after the shard's clock passed its timeout")
		require.ErrorContains(t, err, "acknowledging the drain of default/a")
	})
}

// A sharder whose label PATCH meets a server that never answers gives
// up within its request timeout and labels the object once the server
// answers again; before, the hung PATCH held the sharder's worker, and
// the object stayed unassigned for the rest of the term.
func TestASharderWhoseLabelPatchHangsAssignsOnceTheServerAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		net, hang := hangingServer(t, http.MethodPatch)
		admin := must(testenv.CoreV1Client(net.Config()))
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
		require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())

		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		leases := must(leaderelection.NewClient(net.Config()))
		sharder := must(sharding.NewSharder(sharding.SharderConfig{Config: net.Config(), LeaseClient: leases, LeaseNamespace: "default",
			Ring: ring, Identity: "sharder", Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")},
			Namespace: "default", LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet}))
		member := must(sharding.NewMember(sharding.MemberConfig{Client: leases, Namespace: "default", Ring: ring, Name: "m",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet,
			Run: func(ctx context.Context, _ sharding.Shard) { <-ctx.Done() }}))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		hang.Store(true)
		wg.Go(func() { _ = sharder.Run(ctx) })
		wg.Go(func() { _ = member.Run(ctx) })
		time.Sleep(4 * leaseDuration) // the sharder is elected, sees the member, and its PATCH hangs
		hang.Store(false)

		// A hung PATCH gives up within half the renew deadline; its retry
		// waits at most a lease (RetryLimiter).
		time.Sleep(renewDeadline/2 + leaseDuration + time.Second)
		var got corev1.ConfigMap
		require.NoError(t, admin.Get().Namespace("default").Resource("configmaps").Name("a").Do(ctx).Into(&got))
		require.NotEmpty(t, got.Labels[sharding.Shard{Ring: ring}.Label()], "the object is still unassigned after the server answers again")
	})
}
