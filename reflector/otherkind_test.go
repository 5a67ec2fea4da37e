package reflector_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// scriptedLW answers each Watch with the next scripted fake watcher.
type scriptedLW struct {
	mu      sync.Mutex
	watches []func(opts metav1.ListOptions) watch.Interface
	opened  []metav1.ListOptions
	lists   atomic.Int32
}

func (s *scriptedLW) List(context.Context, metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	s.lists.Add(1)
	return nil, metav1.ListMeta{}, fmt.Errorf("%w: list item 0 is of kind %q, want %q", reflector.ErrUnexpectedObject, "Secret", "ConfigMap")
}

func (s *scriptedLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.opened)
	s.opened = append(s.opened, opts)
	if n < len(s.watches) {
		return s.watches[n](opts), nil
	}
	return watch.NewFakeWithChanSize(1, false), nil // stays open, empty
}

func endBookmark(rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
}

// A watch event of another type ends the watch; Served answers from
// before the change ("served"), and the relist is to find out (docs/03:
// "the list tells"). Streamed, the relist's objects of another type ask
// Served again, as a LIST's do, and its second answer says the resource
// holds another kind: ErrNotServed. (Found by a review: the stream
// skipped them, ended synced and empty, and watched on a resource that
// held another kind, never asking again.)
func TestAStreamedRelistOfObjectsOfAnotherTypeAsksServedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lw := &scriptedLW{}
		lw.watches = []func(metav1.ListOptions) watch.Interface{
			func(metav1.ListOptions) watch.Interface { // the first streaming list, then the CRD holds Secrets
				w := watch.NewFakeWithChanSize(4, false)
				w.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}})
				w.Action(watch.Bookmark, endBookmark("2"))
				w.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", ResourceVersion: "3"}})
				return w
			},
			func(metav1.ListOptions) watch.Interface { // the relist, streamed
				w := watch.NewFakeWithChanSize(4, false)
				w.Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", ResourceVersion: "3"}})
				w.Action(watch.Bookmark, endBookmark("3"))
				return w
			},
		}
		var asked atomic.Int32
		served := func(context.Context) (reflector.Serving, error) {
			if asked.Add(1) == 1 {
				return reflector.Serving{Served: true}, nil // shared from before the change
			}
			return reflector.Serving{OtherKind: "Secret"}, nil
		}
		store, errs, trace := newRecorder[*corev1.ConfigMap](), &errorLog{}, &traceLog{}
		opts := fastBackoff(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: store, OnError: errs.hook, Served: served, Trace: trace.hook})
		opts.StreamingList = true
		runFor(t, must(reflector.New(opts)), time.Hour)
		lw.mu.Lock()
		opened := len(lw.opened)
		lw.mu.Unlock()

		require.Equal(t, 1, errs.count(is(reflector.ErrNotServed)),
			"the resource has held Secrets for an hour; Served asked %d times, %d watches opened, errors: %v", asked.Load(), opened, errs.all())
		// No 404 came: KindNotServed is traced for a resource holding
		// another kind as well, as its doc says.
		notServed := trace.of(reflector.KindNotServed)
		require.Len(t, notServed, 1)
		assert.Contains(t, notServed[0].Detail, "holding kind Secret")
	})
}

// runFor runs r in the test's bubble for d, until every goroutine is
// blocked, then stops it and waits for Run to return.
func runFor(t *testing.T, r *reflector.Reflector[*corev1.ConfigMap], d time.Duration) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	time.Sleep(d)
	synctest.Wait()
	cancel()
	<-done
}
