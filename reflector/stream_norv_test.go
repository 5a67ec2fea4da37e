package reflector_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// A streamed list whose closing bookmark carries no resourceVersion is
// refused as a LIST without one is (ErrNoResourceVersion: no watch could
// start from it), not handed to the store as complete with the next
// watch opened at resourceVersion "", which a real server answers from
// "now": deletions made in between would never be seen. (Found by a bug
// hunt.)
func TestAStreamedListWithoutAResourceVersionIsRefusedAsAListIs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := memlistwatch.New[*corev1.ConfigMap]()
		s := &spy[*corev1.ConfigMap]{inner: lw}
		s.onWatch = func(call int, opts metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(4, false)
			if opts.SendInitialEvents != nil {
				w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", ResourceVersion: "5"}})
				w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}) // no resourceVersion
				w.Stop() // the connection ends soon after
			}
			return w, nil // any other watch stays open
		}
		store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
		r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store, OnError: errs.hook,
			Tuning: reflector.Tuning{StreamingList: true}})))
		run(t, r)
		time.Sleep(5 * time.Second)
		synctest.Wait()

		for i, w := range s.watchCalls() {
			if w.SendInitialEvents == nil {
				assert.NotEmpty(t, w.ResourceVersion, "watch %d is a plain watch from resourceVersion \"\" (from 'now': deletions in between are lost)", i+1)
			}
		}
		assert.Zero(t, store.count("replace"), "a streamed list without a resourceVersion reached the store as a complete list")
		assert.NotZero(t, errs.count(is(reflector.ErrNoResourceVersion)), "not reported as a list without a resourceVersion: %v", errs.all())
	})
}
