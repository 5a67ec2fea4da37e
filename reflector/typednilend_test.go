package reflector_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// nilEndLW streams one ConfigMap and then, in place of the end bookmark,
// a BOOKMARK with a typed nil; the watch ends at its timeoutSeconds, as
// the server ends it. A LIST answers the same ConfigMap.
type nilEndLW struct{ lists, watches atomic.Int32 }

func (lw *nilEndLW) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	lw.lists.Add(1)
	return []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}}, metav1.ListMeta{ResourceVersion: "2"}, nil
}

func (lw *nilEndLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	lw.watches.Add(1)
	w := watch.NewFakeWithChanSize(2, false)
	if opts.SendInitialEvents != nil {
		var typedNil *corev1.ConfigMap
		w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}})
		w.Action(watch.Bookmark, typedNil)
	}
	go func() {
		select {
		case <-time.After(time.Duration(*opts.TimeoutSeconds) * time.Second):
			w.Stop()
		case <-ctx.Done():
		}
	}()
	return w, nil
}

// A streaming list whose end bookmark comes as a typed nil cannot tell
// that its initial events ended: the bookmark is reported and skipped, and
// the stream waits, as for a lost end bookmark (client-go's too), until
// the server ends the watch at its timeout. That is a stream ended early:
// streamed again, and at Tuning.StreamEndedLimit listed instead for the
// rest of Run. It neither hangs nor syncs on a list it cannot know whole.
func TestAStreamWhoseEndBookmarkIsATypedNilEndsAtItsTimeoutAndFallsBackToList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw, store, errs := &nilEndLW{}, newRecorder[*corev1.ConfigMap](), &errorLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook,
			Tuning: reflector.Tuning{StreamingList: true, WatchTimeout: time.Minute, WatchTimeoutJitter: -1}}))
		runFor(t, r, 10*time.Minute)
		assert.Equal(t, 3, errs.count(is(reflector.ErrUnexpectedObject)), "each typed nil, reported: %v", errs.all())
		assert.Equal(t, 3, errs.count(is(reflector.ErrStreamEnded)), "each stream, ended at its timeout: %v", errs.all())
		assert.Equal(t, int32(1), lw.lists.Load(), "then one LIST, for the rest of Run")
		assert.Equal(t, 1, store.count("replace"), "synced by the LIST only")
		assert.Equal(t, "2", r.LastSyncResourceVersion())
	})
}
