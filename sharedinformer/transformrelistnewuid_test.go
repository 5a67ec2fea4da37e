package sharedinformer_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
)

// SetTransform promises that a rejected object is treated alike on a
// watch event and on a relist: the cache keeps the version it had of that
// object ("none, for a new object"), and "a deletion the server reports
// still deletes the last accepted version". An object deleted and made
// again under the same name (a new UID) while the watch was down is a
// deletion of the old object and a new object. On the watch path the
// DELETE removes uid-1 and the rejected ADD of uid-2 leaves nothing
// cached; a relist that finds uid-2 (rejected) must not keep uid-1, an
// object the server no longer has, in the cache.
func TestARelistFindingARejectedObjectOfANewUIDDoesNotKeepTheDeletedObject(t *testing.T) {
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{OnError: func(error) {}})
	require.NoError(t, inf.SetTransform(func(cm *corev1.ConfigMap) (*corev1.ConfigMap, error) {
		if cm.Labels["reject"] != "" {
			return nil, errors.New("rejected")
		}
		return cm, nil
	}))
	a := configMap("a")
	a.UID = "uid-1"
	_, err := lw.Create(a)
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	key := informer.Key{Namespace: "default", Name: "a"}
	cached, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	require.Equal(t, "uid-1", string(cached.UID))

	// While the watch is down, a is deleted and made again as uid-2,
	// which the transform rejects; the history is compacted, so the
	// informer relists.
	lw.Disconnect()
	require.NoError(t, lw.Delete(key))
	again := configMap("a")
	again.UID = "uid-2"
	again.Labels = map[string]string{"reject": "yes"}
	_, err = lw.Create(again)
	require.NoError(t, err)
	rv := lw.Compact()
	lw.Reconnect()

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	require.NoError(t, inf.WaitFor(ctx, rv))

	cached, ok = inf.Indexer().Get(key)
	if ok {
		require.NotEqual(t, "uid-1", string(cached.UID),
			"the cache at %s still holds a uid-1, which the server deleted: the relist put the last known version of the key (another object) in place of the rejected uid-2", inf.LastSyncResourceVersion())
	}
}
