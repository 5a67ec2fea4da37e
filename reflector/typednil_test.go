package reflector_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

// The package doc says bad data never panics, a typed nil included. A
// BOOKMARK event carrying a typed nil T (a ListerWatcher's bug) is
// reported with ErrUnexpectedObject and skipped, on a watch and in a
// streaming list alike. (Found by a docs audit: meta.Accessor takes a
// typed nil for an object, and its GetResourceVersion, or the stream's
// GetAnnotations, panicked.)
func TestATypedNilBookmarkIsReportedAndSkippedNotAPanic(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		name := "watch"
		if streaming {
			name = "streaming list"
		}
		t.Run(name, func(t *testing.T) {
			lw := memlistwatch.New[*corev1.ConfigMap]()
			_, err := lw.Create(cm("default", "a")) // rv 2
			assert.NoError(t, err)
			s := &spy[*corev1.ConfigMap]{inner: lw}
			s.onWatch = func(call int, opts metav1.ListOptions) (watch.Interface, error) {
				if call > 1 || (opts.SendInitialEvents == nil) == streaming {
					return nil, nil // the real one
				}
				w := watch.NewFakeWithChanSize(2, false)
				var typedNil *corev1.ConfigMap
				w.Action(watch.Bookmark, typedNil)
				w.Stop() // then the stream ends: the next call is the real one
				return w, nil
			}
			errs := &errorLog{}
			r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: newRecorder[*corev1.ConfigMap](),
				OnError: errs.hook, Tuning: reflector.Tuning{StreamingList: streaming}})))
			run(t, r)
			eventually(t, func() bool { return len(s.watchCalls()) > 1 && r.LastSyncResourceVersion() == lw.ResourceVersion() }, "never synced past the bad bookmark")
			assert.Equal(t, 1, errs.count(is(reflector.ErrUnexpectedObject)), "the typed nil, reported: %v", errs.all())
		})
	}
}

// The package doc says an ERROR event without a Status is reported with
// ErrUnexpectedObject, never a panic. One carrying a typed nil, a
// *metav1.Status or an *unstructured.Unstructured (what an unstructured
// watch decodes a Status into), ends the watch as a bad ERROR event does,
// reported, and the reflector watches again. (Found by a docs audit:
// apierrors.FromObject dereferenced it.)
func TestAnErrorEventWithATypedNilIsReportedNotAPanic(t *testing.T) {
	for _, bad := range []runtime.Object{(*metav1.Status)(nil), (*unstructured.Unstructured)(nil)} {
		t.Run(fmt.Sprintf("%T", bad), func(t *testing.T) {
			lw := memlistwatch.New[*corev1.ConfigMap]()
			_, err := lw.Create(cm("default", "a")) // rv 2
			assert.NoError(t, err)
			s := &spy[*corev1.ConfigMap]{inner: lw}
			s.onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
				if call > 1 {
					return nil, nil // the real one
				}
				w := watch.NewFakeWithChanSize(1, false)
				w.Error(bad)
				return w, nil
			}
			errs := &errorLog{}
			r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: newRecorder[*corev1.ConfigMap](), OnError: errs.hook})))
			run(t, r)
			eventually(t, func() bool { return len(s.watchCalls()) > 1 }, "never watched again")
			assert.Equal(t, 1, errs.count(is(reflector.ErrUnexpectedObject)), "the ERROR event, reported: %v", errs.all())
		})
	}
}

// An ERROR event whose object is not a Status is reported with
// ErrUnexpectedObject, but unlike a bad ADDED, MODIFIED or DELETED event,
// which is skipped while the watch goes on
// (TestWrongTypeWatchEventsAreReportedAndSkipped), it ends its watch,
// which is opened again from the same resourceVersion after the backoff,
// as the package doc says. (Found by a docs audit: the doc counted it
// among the bad watch events that are skipped.)
func TestAnErrorEventWithoutAStatusEndsItsWatchWhichIsOpenedAgain(t *testing.T) {
	lw := memlistwatch.New[*corev1.ConfigMap]()
	_, err := lw.Create(cm("default", "a")) // rv 2
	assert.NoError(t, err)
	s := &spy[*corev1.ConfigMap]{inner: lw}
	s.onWatch = func(call int, _ metav1.ListOptions) (watch.Interface, error) {
		if call > 1 {
			return nil, nil // the real one
		}
		w := watch.NewFakeWithChanSize(2, false)
		w.Error(cm("default", "not-a-status"))
		after := cm("default", "after-the-error")
		after.ResourceVersion = "3"
		w.Add(after) // never read: the watch ended
		return w, nil
	}
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	r := must(reflector.New(fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: s, Store: store, OnError: errs.hook})))
	run(t, r)
	eventually(t, func() bool { return len(s.watchCalls()) == 2 && lw.Stats().OpenWatches == 1 }, "never watched again")
	assert.Equal(t, 1, errs.count(is(reflector.ErrUnexpectedObject)), "the ERROR event, reported: %v", errs.all())
	assert.Equal(t, "2", s.watchCalls()[1].ResourceVersion, "watched again from where it was")
	assert.NotContains(t, store.state(), "default/after-the-error", "the event after it was never read")
}
