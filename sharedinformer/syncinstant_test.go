package sharedinformer_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// WaitForCacheSync waits on the Synced channels, not on a poll of
// HasSynced: it returns at the instant the cache syncs. In a synctest
// bubble time moves only when every goroutine is blocked, so a polling
// interval, however short, would show as bubble time between the sync and
// the return; a machine too loaded to run the waiter at once does not.
func TestWaitForCacheSyncReturnsAtTheInstantTheCacheSyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
		_, _ = lw.Create(configMap("a"))
		lw.Disconnect() // the first LIST waits until Reconnect
		runInformer(t, inf)
		returned := make(chan time.Time, 1)
		go func() {
			// No deadline: the bubble's minute below would pass one.
			assert.NoError(t, sharedinformer.WaitForCacheSync(t.Context(), inf))
			returned <- time.Now()
		}()
		synctest.Wait() // the LIST and the wait are both blocked
		require.False(t, inf.HasSynced())
		time.Sleep(time.Minute) // a poller's every tick would have passed by now

		lw.Reconnect() // the LIST is answered, and nothing in the sync sleeps
		syncable := time.Now()
		at := <-returned
		assert.True(t, inf.HasSynced())
		assert.Zero(t, at.Sub(syncable), "bubble time passed between the sync and the return: a polling interval")
	})
}
