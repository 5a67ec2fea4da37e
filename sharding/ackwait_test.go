package sharding_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Shard.Clock's doc: "Clock times RequestTimeout", and docs/16: a
// member's drain acknowledgements are "timed on Shard.Clock, the
// member's clock". The wait for the cache after a 409 ends once either
// the shard's Clock or the process's time has passed RequestTimeout:
// here the cache never moves (the member's watch stalled) and the
// shard's Clock is stepped past RequestTimeout.
func TestTheWaitAfterA409EndsWhenTheShardsClockPassesRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		clock := workqueue.NewFakeClock(time.Now())
		shard := sharding.Shard{Ring: ring, Member: "a", Clock: clock}
		_, _, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: refuseAll}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		done := goReconcile(ctx, reconcile, webKey)
		synctest.Wait() // the 409 is in; the acknowledgement waits for the cache
		require.Len(t, srv.patches(), 1)
		clock.Step(sharding.DefaultRequestTimeout + time.Second)
		returned, _ := returnsWithin(ctx, 100*time.Millisecond, func(context.Context) error { return <-done })
		require.True(t, returned,
			"the shard's Clock is %v past the 409, beyond RequestTimeout (%v), and the acknowledgement still waits for the cache on the process's clock",
			sharding.DefaultRequestTimeout+time.Second, sharding.DefaultRequestTimeout)
	})
}

// A parent whose children are drained at once (the parent moved) under
// a member whose watch has stalled (Lag, or a stopped informer): every
// child's PATCH is refused (409: the key's reconcile just wrote it), and
// no child's wait for the cache runs a RequestTimeout of its own: one
// call's waits share one, so the ring key's call returns within it (not
// n × RequestTimeout), its children's acknowledgements failed and
// retried.
func TestACallsWaitsForTheCacheAfter409sDoNotAddUpPerObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		var children []*corev1.ConfigMap
		for i := range 3 {
			children = append(children, drainedWebChild(shard, fmt.Sprintf("web-%d", i), types.UID(fmt.Sprint("uid-", i)), fmt.Sprint(12+i)))
		}
		_, cms := cacheOf(t, children...)
		srv := &scriptedServer{onPatch: refuseAll}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		start := time.Now()
		returned, err := callReturnsWithin(ctx, sharding.DefaultRequestTimeout+time.Second, reconcile, webKey)
		require.True(t, returned,
			"%v after it began, the ring key's call still waited for the cache after its children's 409s (%d PATCHes so far): each child waits a RequestTimeout of its own",
			time.Since(start), len(srv.patches()))
		require.ErrorContains(t, err, "did not show the change a 409 reported", "a cache that never moved is a failure, retried")
	})
}

// A 409 whose change the cache never shows is not "left to the change's
// event": there is none. A webhook that refuses the acknowledgement
// with 409 (an admission response may carry any code), or a conflict
// from an object nobody changes in the member's view, leaves the cache
// at the refused version. Given up with nil, Run would forget the key
// and web-env would stay drained here with nothing to bring its key
// back: a 409 after which the cache did not move within the wait is a
// failure, and the key is retried with backoff.
func TestA409WhoseChangeTheCacheNeverShowsLeavesTheKeyRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		_, _, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: refuseAll} // nothing changed: no event will come
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		queue, _ := runQueueOf(t, ctx, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}}, webKey)
		time.Sleep(2 * sharding.DefaultRequestTimeout) // the wait runs out; a retry's backoff (5 ms first) is long past
		synctest.Wait()
		require.GreaterOrEqual(t, len(srv.patches()), 2,
			"after a 409 the cache never explained, web-env (still drained at rv 12) was given up with no error: the key was forgotten and never came back (PATCHes %q, queue.Len() %d, NumRequeues %d)",
			srv.patches(), queue.Len(), queue.NumRequeues(webKey))
	})
}

// A reconcile given a ctx of its own (a per-call deadline, as
// controller-runtime's ReconciliationTimeout sets, by a wrapper around
// the Reconciler) that ends during the wait after a 409: Run's ctx goes
// on, so Run takes the ctx's error as a failure; marked KeepRetrying, it
// is not given up under MaxRetries while web-env's drain is
// unacknowledged.
func TestAnAcknowledgementCutShortByAPerCallDeadlineIsNotGivenUpUnderMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		_, _, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: refuseAll} // the cache has not seen the change yet
		inner := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		reconcile := func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Second) // a per-call deadline
			defer cancel()
			return inner(ctx, key)
		}
		queue, _ := runQueueOf(t, ctx, reconcile, workqueue.RunOptions[informer.Key]{MaxRetries: 1, OnError: func(informer.Key, error) {}}, webKey)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Zero(t, queue.GaveUp(),
			"the ring key, whose acknowledgement of web-env was cut short by its call's own deadline, was given up under MaxRetries 1 (PATCHes %d): web-env stays drained with no key queued",
			len(srv.patches()))
	})
}
