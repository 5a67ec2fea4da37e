package sharedinformer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// Pitfall 4: a worker that reads the lister before the cache has synced
// sees a partial (here: empty) world, and would act on it, say by creating
// objects that exist. WaitForCacheSync is the guard.
func TestAListerReadBeforeSyncSeesAnEmptyCacheAndAfterWaitForCacheSyncSeesAll(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	for i := range 50 {
		_, _ = lw.Create(configMap(fmt.Sprintf("cm-%d", i)))
	}
	lw.Disconnect() // the first LIST waits, as on a slow or distant API server
	runInformer(t, inf)

	assert.Empty(t, inf.Lister().List(nil), "the broken rule: read before sync, and 50 objects look absent")
	assert.False(t, inf.HasSynced())

	lw.Reconnect()
	waitSynced(t, inf)
	assert.Len(t, inf.Lister().List(nil), 50, "the right way: after WaitForCacheSync the cache holds the whole list")
}
