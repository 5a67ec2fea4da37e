package sharding_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// An acknowledgement refused again at the version the cache shows (here
// by a webhook answering 409, with nothing changing web-env again) is a
// failure, retried: no event of a change will bring the key back, and
// web-env would stay drained here while its member lives.
func TestASecond409WhoseChangeTheCacheNeverShowsLeavesTheKeyRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 { // the reconcile wrote web-env; the cache already shows it
				cacheShows(t, idx, drained, "13")
			}
			return http.StatusConflict, conflict // then a webhook refuses it: nothing changes
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		queue, _ := runQueueOf(t, ctx, reconcile, workqueue.RunOptions[informer.Key]{OnError: func(informer.Key, error) {}}, webKey)
		time.Sleep(2 * sharding.DefaultRequestTimeout)
		synctest.Wait()
		require.GreaterOrEqual(t, len(srv.patches()), 3,
			"after a second 409 the cache never explained, web-env (still drained at rv 13) was given up with no error: the key was forgotten and never came back (PATCHes %q, queue.Len() %d, NumRequeues %d)",
			srv.patches(), queue.Len(), queue.NumRequeues(webKey))
	})
}

// The cacheBudget doc promises "a look of cachePoll after each 409
// however much is left", Shard.RequestTimeout's doc "one look of 10 ms
// after each 409", and acknowledge's doc says "A 409 means it changed
// since ... So acknowledge waits, within the call's budget, for the cache
// to show the change". The code after a retry's 409 says "refused at the
// cache's own version: no change of it may come" and fails at once.
//
// But a change may come: web-env's own key's reconcile wrote it twice
// (rv 13, then rv 14). The ring key's PATCH at rv 12 is refused; the
// cache already shows rv 13 (still drained), the retry at rv 13 is
// refused because the server is at rv 14, which the member's watch
// brings a millisecond later. The call gets no look after that 409 and
// reports "refused again at the version the cache shows" (a failure,
// retried with backoff and counted by OnError) though the budget is
// untouched and the cache moves at once. Passing: the second 409 gets its
// look, and the drain is acknowledged at rv 14 in the same call.
func TestASecond409WhoseChangeTheCacheShowsAMomentLaterGetsItsLook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		defer time.Sleep(time.Second)
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: func(_ int, body []byte) (int, []byte) {
			switch patchedRV(t, body) {
			case "12": // the reconcile wrote web-env (rv 13); the cache already shows it
				cacheShows(t, idx, drained, "13")
				return http.StatusConflict, conflict
			case "13": // and wrote it again (rv 14), seen a millisecond later
				cacheShowsAfter(t, time.Millisecond, idx, drained, "14")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		returned, err := callReturnsWithin(ctx, 2*sharding.DefaultRequestTimeout, reconcile, webKey)
		require.True(t, returned)
		require.NoError(t, err,
			"web-env's second 409, whose change the cache showed a millisecond later, got no look and failed with the whole budget left (PATCHes %q)", srv.patches())
		require.Len(t, srv.patches(), 3, "no retry at the cache's rv 14: %q", srv.patches())
	})
}

// An object that something keeps writing (each PATCH refused, the cache
// showing the new version at once, still drained here) is tried a
// bounded number of times in one call (ackTries, 5), then is a failure,
// retried by the queue: a call does not PATCH for as long as the writer
// writes.
func TestAnAcknowledgementRefusedEveryTimeTheCacheMovesIsTriedFiveTimesACall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			cacheShows(t, idx, drained, strconv.Itoa(12+n)) // written again; the cache already shows it
			return http.StatusConflict, conflict
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.unthrottled(t), "configmaps", doNothing)
		_, err := reconcile(ctx, webKey)
		require.Len(t, srv.patches(), 5, "PATCHes %q", srv.patches())
		require.ErrorContains(t, err, "sharding: acknowledging the drain of ns/web-env: refused 5 times")
		_, kept := errors.AsType[*workqueue.KeepRetryingError](err)
		require.True(t, kept, "a failure the queue keeps retrying: %v", err)
	})
}
