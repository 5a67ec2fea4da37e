package sharedinformer_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// gate blocks the informer's pop loop while it indexes an object named
// "block": the index function runs inside the pop loop's processing.
type gate struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gate) index(cm *corev1.ConfigMap) ([]string, error) {
	if cm.Name == "block" {
		g.once.Do(func() { close(g.entered); <-g.release })
	}
	return nil, nil
}

// traced returns a trace hook that sends the resourceVersion of every
// reflector event of kind on the returned channel.
func traced(kind string) (informer.TraceHook, <-chan string) {
	ch := make(chan string, 100)
	return func(e informer.TraceEvent) {
		if e.Stage == informer.StageReflector && e.Kind == kind {
			ch <- e.ResourceVersion
		}
	}, ch
}

// waitRV waits for rv (or any, if rv is "") on ch and returns it.
func waitRV(t *testing.T, ch <-chan string, rv string) string {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		select {
		case got := <-ch:
			if rv == "" || got == rv {
				return got
			}
		case <-deadline:
			t.Fatalf("the reflector never reached resourceVersion %q", rv)
		}
	}
}

// LastSyncResourceVersion says what the cache has applied: while the pop
// loop is still applying a change, the reflector has already moved on to
// its resourceVersion, but the cache has not.
func TestLastSyncResourceVersionIsNotAheadOfAChangeBeingApplied(t *testing.T) {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	hook, rvs := traced(reflector.KindResourceVersion)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"gate": g.index}, Trace: hook})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	applied := inf.LastSyncResourceVersion()

	blocked, err := lw.Create(configMap("block"))
	require.NoError(t, err)
	<-g.entered // the pop loop is inside the change to "block"
	waitRV(t, rvs, blocked.ResourceVersion)
	assert.Equal(t, applied, inf.LastSyncResourceVersion(),
		"the change at %s is not applied yet: the cache is still at %s", blocked.ResourceVersion, applied)

	close(g.release)
	require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() == blocked.ResourceVersion },
		hangGuard, 5*time.Millisecond)
}

// A bookmark that arrives behind changes not yet applied is reported only
// once all of them are in the cache. The pop loop is held inside the
// change to "block" (it holds the DeltaFIFO while it applies, so the
// reflector waits to write b, c and the bookmark behind it): whatever the
// order in which they then reach the queue, the bookmark's
// resourceVersion may not be reported before b and c are cached. (The
// list is synced first: a list is handed over in parts, and its end waits
// for the pop loop too.)
func TestABookmarkBehindQueuedChangesIsReportedOnlyOnceTheyAreApplied(t *testing.T) {
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	hook, bookmarks := traced(reflector.KindBookmark)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"gate": g.index}, Trace: hook})
	_, err := lw.Create(configMap("a"))
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	listed := inf.LastSyncResourceVersion()
	for _, name := range []string{"block", "b", "c"} {
		_, err := lw.Create(configMap(name))
		require.NoError(t, err)
	}
	<-g.entered                  // the change to "block" is being applied; b and c follow it
	lw.AdvanceResourceVersion(5) // writes elsewhere: the bookmark is newer than any object here
	require.Equal(t, 1, lw.Bookmark())
	assert.Equal(t, listed, inf.LastSyncResourceVersion(), "nothing after the list is applied yet")

	close(g.release)
	bookmarkRV := waitRV(t, bookmarks, "")
	cached := func(names ...string) bool {
		for _, n := range names {
			if _, err := inf.Lister().Namespace("default").Get(n); err != nil {
				return false
			}
		}
		return true
	}
	require.Eventually(t, func() bool {
		rv := inf.LastSyncResourceVersion()
		if rv == bookmarkRV {
			require.True(t, cached("block", "b", "c"), "reported the bookmark %s before the changes queued ahead of it were applied", rv)
			return true
		}
		return false
	}, hangGuard, time.Millisecond)
}
