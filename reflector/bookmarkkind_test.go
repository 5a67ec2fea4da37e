package reflector_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// requireNotServedOnceInAnHour streams lw's resource for an hour with a
// Served that says it holds Secrets now, and requires ErrNotServed
// reported once.
func requireNotServedOnceInAnHour(t *testing.T, lw *scriptedLW) {
	var asked atomic.Int32
	served := func(context.Context) (reflector.Serving, error) {
		asked.Add(1)
		return reflector.Serving{OtherKind: "Secret"}, nil
	}
	store, errs := newRecorder[*corev1.ConfigMap](), &errorLog{}
	opts := fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook, Served: served})
	opts.StreamingList = true
	runFor(t, must(reflector.New(opts)), time.Hour)
	require.Equal(t, 1, errs.count(is(reflector.ErrNotServed)),
		"the resource has held Secrets for an hour; Served asked %d times, errors: %v", asked.Load(), errs.all())
}

// The CRD was deleted (its ConfigMaps with it) and created again holding
// Secrets, none yet; the watch expires and the relist is streamed. Its
// only object is the end bookmark, which the API server stamps with the
// kind the resource holds now: a *corev1.Secret to a client whose scheme
// knows both. Taken as the end of the list, the reflector synced empty
// and watched a resource of another kind, never saying it is not served
// (found by a review); it asks Served, as for any object of another type.
func TestAStreamedEndBookmarkOfAnotherTypeAsksServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{}
		lw.watches = []func(metav1.ListOptions) watch.Interface{
			func(metav1.ListOptions) watch.Interface { // the first streaming list; then the watch expires
				w := watch.NewFakeWithChanSize(4, false)
				w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}})
				w.Action(watch.Bookmark, endBookmark("2"))
				w.Error(&apierrors.NewResourceExpired("too old resource version: 2 (5)").ErrStatus)
				return w
			},
			func(metav1.ListOptions) watch.Interface { // the relist, streamed: the resource holds Secrets, none yet
				w := watch.NewFakeWithChanSize(4, false)
				w.Action(watch.Bookmark, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7",
					Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
				return w
			},
		}
		requireNotServedOnceInAnHour(t, lw)
	})
}

// A progress bookmark of another type while watching says the same: the
// resource holds another kind now, though none of its objects has come.
// The watch ends and Served is asked.
func TestAWatchedBookmarkOfAnotherTypeAsksServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{}
		lw.watches = []func(metav1.ListOptions) watch.Interface{
			func(metav1.ListOptions) watch.Interface { // the streaming list, then the watch of it
				w := watch.NewFakeWithChanSize(4, false)
				a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}
				w.Add(a)
				w.Action(watch.Bookmark, endBookmark("2"))
				w.Delete(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "3"}})
				w.Action(watch.Bookmark, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}})
				return w
			},
		}
		requireNotServedOnceInAnHour(t, lw)
	})
}
