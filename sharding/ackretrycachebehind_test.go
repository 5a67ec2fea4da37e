package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// An acknowledgement retried after a 409 is sent only at a version the
// member's cache holds, so every call that begins later reads the object
// drained. Here the cache moves to rv 13, undrained (the drain taken
// back), while the API server already holds rv 14, drained again; web-env's
// own key, enqueued by rv 13, begins and reconciles it, as the cache says
// it is this member's. No PATCH at rv 14 may let it go meanwhile.
func TestAnAcknowledgementRetriedAtAVersionTheCacheHasNotReachedDoesNotLetGoAnObjectALaterCallReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		shard := sharding.Shard{Ring: ring, Member: "a"}
		drained, idx, cms := drainedEnv(t, shard)

		var reconcile workqueue.ReconcileFunc[informer.Key]
		own := holdKey(informer.KeyFor(drained))
		ownDone := make(chan error, 1)
		ownStarted := false
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				// The drain taken back (rv 13), seen by the cache; no
				// call of web-env's own key has begun yet.
				undrained := drained.DeepCopy()
				undrained.ResourceVersion = "13"
				delete(undrained.Labels, shard.DrainLabel())
				require.NoError(t, idx.Update(undrained))
				return http.StatusConflict, conflict
			}
			// The retry at rv 14, sent after its wait: web-env's own key,
			// enqueued by rv 13, begins now and reconciles web-env, which
			// the cache (rv 13) says is this member's.
			ownStarted = true
			go func() { _, err := reconcile(ctx, own.key); ownDone <- err }()
			<-own.entered
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile = sharding.Reconciler(shard, cms, srv.client(t), "configmaps", own.reconcile)

		ringDone := goReconcile(ctx, reconcile, webKey)
		synctest.Wait()
		patches := srv.patches()
		close(own.release)
		cancel()
		if ownStarted {
			<-ownDone
		}
		<-ringDone
		require.Len(t, patches, 1,
			"web-env was acknowledged at rv 14, which its cache did not hold (PATCHes %q), while a call of its own key that began after the retry's wait, reading rv 13 (undrained), was reconciling it", patches)
	})
}
