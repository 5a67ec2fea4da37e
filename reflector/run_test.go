package reflector_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/memlistwatch"
	"github.com/listwatch/informer/reflector"
)

func TestBookmarkAdvancesTheResourceVersionWithoutStoreCalls(t *testing.T) {
	f := startMem(t, 1, nil)
	f.lw.AdvanceResourceVersion(10)
	require.Equal(t, 1, f.lw.Bookmark())
	f.waitSynced(t)
	assert.Equal(t, "12", f.r.LastSyncResourceVersion())
	assert.Equal(t, 0, f.store.count("add")+f.store.count("update")+f.store.count("delete"))
	assert.Len(t, f.trace.of(reflector.KindBookmark), 1)

	// A watch restarted now starts from the bookmark.
	f.lw.DropWatches()
	f.waitSynced(t)
	assert.Equal(t, "12", f.spy.watchCalls()[1].ResourceVersion)
}

func TestResyncCallsTheStoreEveryPeriodWithoutRequests(t *testing.T) {
	f := startMem(t, 3, func(o *reflector.Options[*corev1.ConfigMap]) { o.ResyncPeriod = 50 * time.Millisecond })
	eventually(t, func() bool { return f.store.count("resync") >= 4 }, "resync never ran 4 times")
	assert.Equal(t, memlistwatch.Stats{Lists: 1, Watches: 1, OpenWatches: 1}, f.lw.Stats(), "resync makes no request")
}

func TestStoreErrorsAreReportedAndTheWatchGoesOn(t *testing.T) {
	f := startMem(t, 1, nil)
	refusal := errors.New("no thanks")
	f.store.setFail(refusal)
	_, err := f.lw.Create(cm("default", "refused"))
	require.NoError(t, err)
	f.waitSynced(t)
	f.store.setFail(nil)
	_, err = f.lw.Create(cm("default", "accepted"))
	require.NoError(t, err)
	f.waitSynced(t)
	assert.Equal(t, 1, f.errs.count(is(refusal)))
	assert.Contains(t, f.store.state(), "default/accepted")
	assert.Equal(t, 1, f.lw.Stats().Watches, "a store error does not end the watch")
}

func TestRunTwiceConcurrentlyIsRefused(t *testing.T) {
	f := startMem(t, 1, nil)
	err := f.r.Run(t.Context())
	assert.ErrorContains(t, err, "already running")
	f.stop()
	// After it returned, it may run again.
	f.stop = run(t, f.r)
	f.waitSynced(t)
}

func TestRunLeavesNoGoroutineBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := startMem(t, 3, func(o *reflector.Options[*corev1.ConfigMap]) { o.ResyncPeriod = 10 * time.Millisecond })
	_, err := f.lw.Create(cm("default", "x"))
	require.NoError(t, err)
	f.waitSynced(t)
	f.stop()
	assert.Equal(t, 0, f.lw.Stats().OpenWatches, "Run stopped its watch")
}

func TestNewRejectsAMissingListerWatcherOrStore(t *testing.T) {
	_, err := reflector.New(reflector.Options[*corev1.ConfigMap]{Store: newRecorder[*corev1.ConfigMap]()})
	assert.EqualError(t, err, "reflector.New: Options.ListerWatcher is nil")
	_, err = reflector.New(reflector.Options[*corev1.ConfigMap]{ListerWatcher: memlistwatch.New[*corev1.ConfigMap]()})
	assert.EqualError(t, err, "reflector.New: Options.Store is nil")
}
