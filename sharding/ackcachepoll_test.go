package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Since ead402f an acknowledgement refused with 409 polls the member's
// cache on the shard's Clock (AfterFunc every 10 ms) until the cache
// moves. The Clock was only the timer of RequestTimeout before: a
// request that the server answers returned whatever the clock did. Now
// a clock that does not move — a test's FakeClock stepped only when the
// test wants a timeout, the simulator's paused clock — holds the worker
// after a 409 although the cache moved a moment later: the retry that
// would let web-env go is never sent, and the key's worker never
// returns (until its ctx ends). Passing: the acknowledgement notices the
// cache's move (an event, or polling that does not need the clock to be
// stepped) and PATCHes at rv 13 without the clock being stepped.
func TestAnAcknowledgementRetriedAfterA409DoesNotWaitForTheShardsClockToBeStepped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		clock := workqueue.NewFakeClock(time.Now()) // never stepped: a paused clock
		shard := sharding.Shard{Ring: ring, Member: "a", Clock: clock}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				// The ring key's reconcile wrote web-env (rv 13, still
				// drained); the member's watch brings it a millisecond
				// after this 409.
				cacheShowsAfter(t, time.Millisecond, idx, drained, "13")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)

		returned, err := callReturnsWithin(ctx, time.Minute, reconcile, webKey)
		require.True(t, returned,
			"a minute after its 409 and the cache's move to rv 13, the acknowledgement of web-env still waited on the shard's clock, which nobody stepped (PATCHes %q)", srv.patches())
		require.NoError(t, err)
		require.Len(t, srv.patches(), 2, "the retry at the cache's rv 13 was not sent")
	})
}

// workqueue.Run's contract (and ReconcileFunc's): a reconcile cut short
// by its ctx returns ctx.Err(), and the key is added again "so that
// whoever runs the queue next reconciles it". Before ead402f, a 409's GET
// under an ended ctx failed with the ctx's error and acknowledge returned
// it. Now cacheMoves returns (nil, false) when ctx ends, the 409 stays
// the error, and a 409 is "left to the event": the reconcile returns nil,
// Run forgets the key, and web-env, still drained at rv 12 in the
// cache, has no key in the queue that the next runner takes over.
// Passing: the key is in the queue after Run returns.
func TestAnAcknowledgementCutShortByItsCtxWhileWaitingForTheCacheLeavesItsKeyQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		_, _, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: refuseAll} // the cache has not seen the change yet
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		queue, ran := runQueueOf(t, ctx, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}}, webKey)
		time.Sleep(time.Second) // within RequestTimeout: the acknowledgement polls the cache
		synctest.Wait()
		require.Len(t, srv.patches(), 1)
		cancel()
		<-ran
		require.Equal(t, 1, queue.Len(),
			"the ring key's reconcile, cut short by its ctx while waiting for the cache after a 409, returned no error: Run forgot %s, and web-env stays drained with no key queued", webKey)
	})
}
