package reflector_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// badThenGoneLW lists one ConfigMap, and answers every watch with one
// bad event, then 410 Gone.
type badThenGoneLW struct {
	bad   watch.Event
	lists atomic.Int32
}

func (lw *badThenGoneLW) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	lw.lists.Add(1)
	return []*corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}}, metav1.ListMeta{ResourceVersion: "2"}, nil
}

func (lw *badThenGoneLW) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	w := watch.NewFakeWithChanSize(2, false)
	if lw.bad.Type != "" {
		w.Action(lw.bad.Type, lw.bad.Object)
	}
	w.Error(&apierrors.NewResourceExpired("too old resource version: 2 (3)").ErrStatus)
	return w, nil
}

// The first relist after a 410 is at once; a 410 again before a watch
// has worked waits the backoff, so that a server answering 410 to every
// watch cannot make the reflector list in a loop (afterExpired). A bad
// event, reported and skipped (a typed nil T, as a bookmark or an
// object), is not a watch that worked. (Found by a review: the event
// loop took any event that was not of another type as a watch that
// delivered, so such a server had the reflector LIST at the re-watch
// rate limit, five a second, rather than after a growing backoff.)
func TestABadEventSkippedIsNotAWatchThatWorkedAfterA410(t *testing.T) {
	var typedNil *corev1.ConfigMap
	for name, bad := range map[string]watch.Event{
		"typed-nil bookmark": {Type: watch.Bookmark, Object: typedNil},
		"typed-nil ADDED":    {Type: watch.Added, Object: typedNil},
		"none":               {},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lw := &badThenGoneLW{bad: bad}
				r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: newRecorder[*corev1.ConfigMap](),
					OnError: (&errorLog{}).hook}))
				runFor(t, r, time.Minute)
				// The backoff from 800ms doubling, with jitter: at most 8 in a
				// minute. The re-watch limit alone: 10 at once, then 5 a second.
				assert.LessOrEqual(t, int(lw.lists.Load()), 10, "LISTs in a minute of a 410 after every bad event")
			})
		})
	}
}
