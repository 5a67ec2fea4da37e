package sharedinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/sharedinformer"
)

// A Registration removed while its handler is still in the first OnAdd
// of its initial list counts as synced: Synced closes and a sync wait on
// it returns nil, though the handler never got the rest of its list
// (nothing more of it will come). docs/06 says so, so that a worker
// gated on the wait does not take nil for "the handler has its list".
func TestARegistrationRemovedMidListIsSyncedWithoutItsList(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{})
	_, _ = lw.Create(configMap("one"))
	_, _ = lw.Create(configMap("two"))
	runInformer(t, inf)
	waitSynced(t, inf)

	inAdd, release := make(chan struct{}, 2), make(chan struct{})
	adds := 0
	reg, err := inf.AddEventHandler(sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(*corev1.ConfigMap, bool) { adds++; inAdd <- struct{}{}; <-release },
	}, sharedinformer.HandlerOptions{Name: "removed"})
	require.NoError(t, err)
	<-inAdd // in the first OnAdd of two
	require.NoError(t, inf.RemoveEventHandler(reg))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard, not a timing
	defer cancel()
	assert.NoError(t, sharedinformer.WaitForCacheSync(ctx, reg), "removed: counted as synced")
	assert.True(t, reg.HasSynced())
	close(release)
	<-reg.Stopped()
	assert.Equal(t, 1, adds, "the handler returned from one OnAdd of its two")
}
