package reflector_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

func TestAStreamingListReachesAPartStoreInPartsAndFinishesAtItsBookmark(t *testing.T) {
	store := &partRecorder[*corev1.ConfigMap]{recorder: newRecorder[*corev1.ConfigMap]()}
	f := startMem(t, 600, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.StreamingList = true
		o.Store = store
	})
	f.waitSynced(t)
	assert.Equal(t, 0, f.lw.Stats().Lists, "streamed, not listed")
	assert.Equal(t, []string{"begin", "part 256", "part 256", "part 88", "finish 601"}, store.calls(),
		"parts as the initial events arrive, the end at the bookmark")
	assert.Zero(t, store.count("replace"), "never the whole list at once")
	assert.Len(t, store.state(), 600)
}

// A deletion among the initial events is not the protocol, and cannot be
// taken back from a part already handed over: the reflector lists
// instead, and the list it finishes is the one the store keeps.
func TestADeletionAmongStreamedInitialEventsMakesTheReflectorListInstead(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, err := lw.Create(cm("default", "kept")) // rv 2
	require.NoError(t, err)
	s := &spy[*corev1.ConfigMap]{inner: lw}
	s.onWatch = func(call int, opts metav1.ListOptions) (watch.Interface, error) {
		if opts.SendInitialEvents == nil {
			return lw.Watch(t.Context(), opts) // the watch after the LIST
		}
		w := watch.NewFakeWithChanSize(4, false)
		gone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gone", ResourceVersion: "1"}}
		w.Add(gone)
		w.Delete(gone)
		return w, nil
	}
	store := &partRecorder[*corev1.ConfigMap]{recorder: newRecorder[*corev1.ConfigMap]()}
	errs := &errorLog{}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store, Tuning: reflector.Tuning{StreamingList: true}, OnError: errs.hook})))
	run(t, r)

	eventually(t, func() bool { return r.LastSyncResourceVersion() == "2" }, "never listed")
	assert.Equal(t, 1, lw.Stats().Lists, "a LIST after the stream")
	assert.Equal(t, []string{"begin", "begin", "part 1", "finish 2"}, store.calls(),
		"the stream's replacement is never finished; the list's is")
	assert.Equal(t, 1, errs.count(func(err error) bool { return err != nil }), "the deletion is reported: %v", errs.all())
}
