package reflector_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/reflector"
)

// discovery stands in for the server's discovery: whether it lists the
// resource, and how often it was asked.
type discovery struct {
	gone  atomic.Bool
	fail  error // returned by every answer when set
	asked atomic.Int32
}

func (d *discovery) served(context.Context) (reflector.Serving, error) {
	d.asked.Add(1)
	return reflector.Serving{Served: !d.gone.Load()}, d.fail
}

var errNotFound = apierrors.NewNotFound(schema.GroupResource{Group: "zoo.listwatch.dev", Resource: "octopodes"}, "")

// answer404When makes every LIST and WATCH of f fail with a 404 while
// gone says so.
func answer404When(f *memFixture, gone func() bool) {
	f.spy.onList = func(int, metav1.ListOptions) error {
		if gone() {
			return errNotFound
		}
		return nil
	}
	f.spy.onWatch = func(int, metav1.ListOptions) (watch.Interface, error) {
		if gone() {
			return nil, errNotFound
		}
		return nil, nil
	}
}

func TestAResourceNoLongerServedIsReportedOnceEmptiedAndNoLongerRequested(t *testing.T) {
	d := &discovery{}
	f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.Served = d.served
		o.ShortWatch = time.Nanosecond // the watch the deletion ends was not short
	})
	answer404When(f, d.gone.Load)

	d.gone.Store(true) // the CRD is deleted: its objects with it, then the resource
	require.NoError(t, f.lw.Delete(key("cm-00")))
	f.lw.DropWatches()
	// The trace event comes first, then the report, then the store's
	// empty Replace: wait for the last.
	eventually(t, func() bool { return len(f.trace.of(reflector.KindNotServed)) == 1 && len(f.store.replaces()) >= 2 },
		"never reported the resource gone and emptied the store")

	assert.Empty(t, f.store.state(), "what the watch did not delete, the store's Replace did")
	replaces := f.store.replaces()
	require.Len(t, replaces, 2, "the first list, then one empty Replace")
	assert.Empty(t, replaces[1])
	errs := f.errs.all()
	require.Len(t, errs, 1, "one report, not one per retry: %v", errs)
	assert.ErrorIs(t, errs[0], reflector.ErrNotServed)
	assert.True(t, apierrors.IsNotFound(errs[0]), "the 404 is kept: %v", errs[0])

	lists, watches, asked := len(f.spy.listCalls()), len(f.spy.watchCalls()), d.asked.Load()
	eventually(t, func() bool { return d.asked.Load() >= asked+3 }, "discovery was not asked again")
	assert.Len(t, f.spy.listCalls(), lists, "no LIST while the resource is not served")
	assert.Len(t, f.spy.watchCalls(), watches, "no WATCH while the resource is not served")

	// Reinstalled, with an object of its own: a fresh list, nothing old.
	require.NoError(t, f.lw.Delete(key("cm-01")))
	_, err := f.lw.Create(cm("default", "reinstalled"))
	require.NoError(t, err)
	d.gone.Store(false)
	f.waitSynced(t)
	assert.Equal(t, []string{"default/reinstalled"}, slices.Collect(maps.Keys(f.store.state())))
	relists := f.trace.of(reflector.KindRelist)
	require.NotEmpty(t, relists)
	assert.Equal(t, reflector.CauseServedAgain, relists[len(relists)-1].Reason)
	assert.Len(t, f.trace.of(reflector.KindServedAgain), 1)
	assert.Len(t, f.errs.all(), 1, "coming back reports nothing")
}

// One 404 proves nothing: only discovery's "no" stops the reflector. A
// 404 while discovery lists the resource, or while discovery cannot be
// asked, is retried like any failure.
func TestA404WhileDiscoveryListsTheResourceOrCannotTellIsRetried(t *testing.T) {
	for name, d := range map[string]*discovery{
		"listed":      {},
		"cannot tell": {fail: errors.New("discovery is down")},
	} {
		t.Run(name, func(t *testing.T) {
			if d.fail != nil {
				d.gone.Store(true)
			}
			var failures atomic.Int32
			f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) {
				o.Served = d.served
				o.ShortWatch = time.Nanosecond
			})
			answer404When(f, func() bool { return failures.Add(1) <= 2 })
			f.lw.DropWatches()
			f.waitSynced(t)
			assert.Empty(t, f.trace.of(reflector.KindNotServed))
			assert.Equal(t, 2, f.errs.count(func(err error) bool { return apierrors.IsNotFound(err) }), "each 404 reported and retried")
			assert.Zero(t, f.errs.count(is(reflector.ErrNotServed)))
		})
	}
}

// A CRD that moved to a new version deletes no object: the reflector
// reports a *VersionNotServedError once, keeps the store as it was, sends
// it no delete and no Replace, and stops asking for the old version.
func TestAVersionNoLongerServedIsReportedOnceAndTheStoreIsKeptWithNoDeletes(t *testing.T) {
	var moved atomic.Bool
	var asked atomic.Int32
	served := func(context.Context) (reflector.Serving, error) {
		asked.Add(1)
		if moved.Load() {
			return reflector.Serving{Version: "v1beta1", Elsewhere: []string{"v1"}}, nil
		}
		return reflector.Serving{Served: true, Version: "v1beta1"}, nil
	}
	f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
		o.Served = served
		o.ShortWatch = time.Nanosecond
	})
	answer404When(f, moved.Load)
	before := f.store.state()

	moved.Store(true)
	f.lw.DropWatches()
	eventually(t, func() bool { return len(f.trace.of(reflector.KindVersionNotServed)) == 1 }, "never reported the version gone")

	errs := f.errs.all()
	require.Len(t, errs, 1, "one report, not one per retry: %v", errs)
	var notServed *reflector.VersionNotServedError
	require.ErrorAs(t, errs[0], &notServed)
	assert.Equal(t, "v1beta1", notServed.Version)
	assert.Equal(t, []string{"v1"}, notServed.Served)
	assert.True(t, apierrors.IsNotFound(errs[0]), "the 404 is kept: %v", errs[0])
	assert.NotErrorIs(t, errs[0], reflector.ErrNotServed, "the resource is not gone, only its version")

	lists, watches, n := len(f.spy.listCalls()), len(f.spy.watchCalls()), asked.Load()
	eventually(t, func() bool { return asked.Load() >= n+3 }, "discovery was not asked again")
	assert.Equal(t, before, f.store.state(), "the store keeps what it held")
	assert.Zero(t, f.store.count("delete"), "moving a version deletes nothing")
	assert.Equal(t, 1, f.store.count("replace"), "no empty Replace: only the first list")
	assert.Empty(t, f.trace.of(reflector.KindNotServed))
	assert.Len(t, f.spy.listCalls(), lists, "no LIST while the version is not served")
	assert.Len(t, f.spy.watchCalls(), watches, "no WATCH while the version is not served")
}

// Discovery answers "gone" from several requests, and a CRD that moves
// between them (v1 to v2 and back) can look gone for one check while its
// objects live on. "Gone" is the one answer that empties the store, so the
// reflector believes it only when discovery says it again a backoff
// later: a "gone" followed by "served" reports the 404 and deletes nothing.
func TestAGoneThatDiscoveryDoesNotRepeatABackoffLaterDeletesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var flipped atomic.Bool // the CRD is away for a moment: one check sees it gone
		var asked atomic.Int32
		served := func(context.Context) (reflector.Serving, error) {
			asked.Add(1)
			if flipped.CompareAndSwap(true, false) {
				return reflector.Serving{Version: "v1"}, nil // gone, once
			}
			return reflector.Serving{Served: true, Version: "v1"}, nil
		}
		f := startMem(t, 2, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.Served = served
			o.ShortWatch = time.Nanosecond
		})
		var failures atomic.Int32
		answer404When(f, func() bool { return failures.Add(1) <= 1 })
		before := f.store.state()

		flipped.Store(true)
		f.lw.DropWatches()
		f.waitSynced(t)
		synctest.Wait()

		assert.Equal(t, int32(2), asked.Load(), "the gone was asked again, and the second answer believed")
		assert.Empty(t, f.trace.of(reflector.KindNotServed), "never reported gone")
		assert.Zero(t, f.errs.count(is(reflector.ErrNotServed)))
		assert.Equal(t, 1, f.errs.count(func(err error) bool { return apierrors.IsNotFound(err) }), "the 404 reported and retried")
		assert.Equal(t, before, f.store.state(), "the store keeps its live objects")
		assert.Zero(t, f.store.count("delete"))
		for _, r := range f.store.replaces() {
			assert.NotEmpty(t, r, "no empty Replace")
		}
	})
}

// The second look at a "gone" waits BackoffInitial, whatever the backoff
// has grown to, does not grow it, and is marked on its context
// (SecondLook): a resource that is really gone is
// emptied from the store no more than BackoffInitial after discovery
// first said so, even after a long run of failures.
func TestTheSecondLookAtAGoneWaitsBackoffInitialWhateverTheBackoffHasGrownTo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var gone atomic.Bool
		var mu sync.Mutex
		var asked []time.Time // when discovery was asked, once gone
		var second []bool     // whether each of those asks was marked a second look
		served := func(ctx context.Context) (reflector.Serving, error) {
			if !gone.Load() {
				return reflector.Serving{Served: true}, nil
			}
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, time.Now())
			second = append(second, reflector.SecondLook(ctx))
			return reflector.Serving{}, nil
		}
		f := startMem(t, 1, func(o *reflector.Options[*corev1.ConfigMap]) {
			o.Served = served
			o.ShortWatch = time.Nanosecond
			o.BackoffMax = time.Hour // so that the backoff, once grown, is far above BackoffInitial
		})
		var failures atomic.Int32
		answer404When(f, func() bool { return failures.Add(1) <= 8 || gone.Load() })
		f.lw.DropWatches()
		for failures.Load() < 8 { // eight 404s while served: the backoff grows to 10 ms × 2⁸
			time.Sleep(time.Second)
		}
		gone.Store(true)
		for len(f.trace.of(reflector.KindNotServed)) == 0 {
			time.Sleep(time.Second)
		}

		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, len(asked), 2)
		assert.Equal(t, 10*time.Millisecond, asked[1].Sub(asked[0]), "the second look waits BackoffInitial")
		assert.Equal(t, []bool{false, true}, second[:2], "the second look's context says so (SecondLook), for Served to ask afresh")
	})
}
