package reflector_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// expiringLW pages one ConfigMap a page, two pages a list. It answers
// the LIST calls numbered in expireAt (from 1) 410 Gone, as for an
// expired continue token, and the one numbered holdAt waits for its
// context to end.
type expiringLW struct {
	expireAt map[int]bool
	holdAt   int

	mu    sync.Mutex
	lists []metav1.ListOptions
}

func (lw *expiringLW) listCalls() []metav1.ListOptions {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]metav1.ListOptions(nil), lw.lists...)
}

func (lw *expiringLW) List(ctx context.Context, opts metav1.ListOptions) ([]*corev1.ConfigMap, metav1.ListMeta, error) {
	lw.mu.Lock()
	lw.lists = append(lw.lists, opts)
	call := len(lw.lists)
	lw.mu.Unlock()
	a := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "2"}}
	b := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", ResourceVersion: "3"}}
	switch {
	case call == lw.holdAt:
		<-ctx.Done()
		return nil, metav1.ListMeta{}, ctx.Err()
	case lw.expireAt[call]:
		return nil, metav1.ListMeta{}, apierrors.NewResourceExpired("continue token expired")
	case opts.Continue != "":
		return []*corev1.ConfigMap{b}, metav1.ListMeta{ResourceVersion: "3"}, nil
	case opts.Limit == 1:
		return []*corev1.ConfigMap{a}, metav1.ListMeta{ResourceVersion: "3", Continue: "page-2"}, nil
	}
	return []*corev1.ConfigMap{a, b}, metav1.ListMeta{ResourceVersion: "3"}, nil // unpaged
}

func (lw *expiringLW) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFakeWithChanSize(1, false), nil // stays open, empty
}

// Run may be called again once it returned; its first list is a new list.
// Its first continue token that expires starts the list over at once and
// paged, as in a first Run (docs/03: "relist at once the first time";
// ExpiredContinueLimit is "how many times one list may lose its continue
// token"), whatever the previous Run's last list lost before its context
// ended. (Found by a review: expired and expiredContinues outlived their
// Run, so the second Run's first expiry waited the backoff and listed
// unpaged, as if it were the earlier list's second.)
func TestARunAgainStartsItsListWithNoExpiryOfThePreviousRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first Run: page 1 (call 1), its token expires (2), the list
		// starts over at once (3), and the Run's context ends while that
		// page is answered. The second Run: page 1 (4), its token expires
		// (5), the list starts over (6).
		lw := &expiringLW{expireAt: map[int]bool{2: true, 5: true}, holdAt: 3}
		trace := &traceLog{}
		r := must(reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: lw, Store: newRecorder[*corev1.ConfigMap](),
			Trace: trace.hook, OnError: (&errorLog{}).hook, Tuning: reflector.Tuning{PageSize: 1, ExpiredContinueLimit: 2}}))

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		synctest.Wait()
		require.Len(t, lw.listCalls(), 3, "page 1, its expired token, the restart held")
		require.Empty(t, trace.of(reflector.KindBackoff), "the first Run's first expiry started over at once")
		cancel()
		<-done

		ctx, cancel = context.WithCancel(t.Context())
		done = make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		time.Sleep(time.Minute) // past any backoff
		synctest.Wait()
		cancel()
		<-done
		lists := lw.listCalls()
		require.GreaterOrEqual(t, len(lists), 6, "page 1, its expired token, the restart: %v", lists)
		assert.Empty(t, trace.of(reflector.KindBackoff), "the second Run's first expiry waited the backoff")
		assert.Equal(t, int64(1), lists[5].Limit, "the second Run's list lost its token once, of ExpiredContinueLimit 2: paged again")
	})
}
