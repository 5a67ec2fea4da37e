package sharding_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Shard.Clock says "Nil: informer.RealClock", and a nil pointer held in
// it (a *FakeClock declared and never made) is nil too, as
// informer.ClockOrReal takes it everywhere else: the request timeout
// (informer.WithTimeout) already ran on the real clock. The wait for the
// cache after a 409 checked only `clock == nil`, kept the nil pointer,
// and panicked with a nil dereference at its first Now, inside the
// reconcile. Passing: the acknowledgement retried after the 409 is sent
// at the cache's rv 13, with no panic.
func TestANilPointerHeldInShardClockIsTheRealClockAfterA409(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var clock *workqueue.FakeClock
		shard := sharding.Shard{Ring: ring, Member: "a", Clock: clock}
		drained, idx, cms := drainedEnv(t, shard)
		srv := &scriptedServer{onPatch: func(n int, _ []byte) (int, []byte) {
			if n == 1 {
				cacheShowsAfter(t, time.Millisecond, idx, drained, "13")
				return http.StatusConflict, conflict
			}
			return http.StatusOK, configMapJSON(t, drained)
		}}
		reconcile := sharding.Reconciler(shard, cms, srv.client(t), "configmaps", doNothing)
		require.NotPanics(t, func() {
			_, err := reconcile(context.Background(), webKey)
			require.NoError(t, err)
		})
		require.Len(t, srv.patches(), 2, "the retry at the cache's rv 13 was not sent")
		require.Equal(t, "13", patchedRV(t, srv.body(1)))
	})
}
