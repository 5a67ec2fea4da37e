package reflector_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// A refused streaming list makes the reflector LIST "for the rest of
// Run" (Tuning.StreamingList). A reflector run again, once Run returned
// (TestRunTwiceConcurrentlyIsRefused), streams again, its relists too.
// (Found by a docs audit: the refusal outlived its Run, so the second
// Run streamed its first list but LISTed every relist.)
func TestARefusedStreamingListIsListedOnlyForTheRestOfThatRun(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, err := lw.Create(cm("default", "a"))
	require.NoError(t, err)
	var refuse atomic.Bool
	refuse.Store(true)
	s := &spy[*corev1.ConfigMap]{inner: lw}
	s.onWatch = func(_ int, opts metav1.ListOptions) (watch.Interface, error) {
		if refuse.Load() && opts.SendInitialEvents != nil {
			return nil, apierrors.NewBadRequest("sendInitialEvents is not supported")
		}
		return nil, nil
	}
	store := newRecorder[*corev1.ConfigMap]()
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store,
		OnError: (&errorLog{}).hook, Tuning: reflector.Tuning{StreamingList: true}})))
	// The n-th list is in, and watched from: the resourceVersion alone
	// would not tell the second Run's list from the first's.
	listed := func(n int) func() bool {
		return func() bool {
			return store.count("replace") == n && r.LastSyncResourceVersion() == lw.ResourceVersion() && lw.Stats().OpenWatches > 0
		}
	}

	stop := run(t, r)
	eventually(t, listed(1), "the first Run never synced")
	require.Equal(t, 1, lw.Stats().Lists, "refused: a LIST instead")
	stop()

	refuse.Store(false) // the server streams now
	run(t, r)
	eventually(t, listed(2), "the second Run never synced")
	lw.Disconnect() // a 410: a relist
	_, err = lw.Create(cm("default", "b"))
	require.NoError(t, err)
	lw.Compact()
	lw.Reconnect()
	eventually(t, listed(3), "the second Run never relisted")
	assert.Equal(t, 1, lw.Stats().Lists, "the second Run streamed its list and its relist: no LIST")
}
