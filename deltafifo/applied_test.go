package deltafifo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
)

// a at 5, b at 6, a again at 7, a bookmark at 8: popping a applies 5 and
// 7, but b's 6 still waits, so only 5 is applied; popping b applies the
// rest, the bookmark included.
func TestAppliedResourceVersionWaitsForEveryEarlierWrite(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "5")))
	require.NoError(t, f.Add(cm("b", "6")))
	require.NoError(t, f.Update(cm("a", "7")))
	require.NoError(t, f.Bookmark("8"))
	assert.Equal(t, "", f.AppliedResourceVersion(), "nothing popped")

	require.Equal(t, "default/a", popOne(t, f, nil).Key)
	assert.Equal(t, "5", f.AppliedResourceVersion(), "7 is in the cache, but 6 is not yet")
	require.Equal(t, "default/b", popOne(t, f, nil).Key)
	assert.Equal(t, "8", f.AppliedResourceVersion(), "everything up to the bookmark")
}

func TestABookmarkOnAnEmptyQueueIsAppliedAtOnce(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Replace(nil, "3"))
	assert.Equal(t, "3", f.AppliedResourceVersion(), "an empty list over an empty cache queues nothing")
	require.NoError(t, f.Bookmark("9"))
	assert.Equal(t, "9", f.AppliedResourceVersion())
}

func TestARequeuedKeyKeepsItsWritesPending(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	require.NoError(t, f.Add(cm("a", "5")))
	err := f.Pop(context.Background(), func(informer.Key, deltafifo.Deltas[*corev1.ConfigMap], bool) error {
		return deltafifo.ErrRequeue
	})
	require.ErrorIs(t, err, deltafifo.ErrRequeue)
	assert.Equal(t, "", f.AppliedResourceVersion(), "a was handed back, not applied")
	require.Equal(t, "default/a", popOne(t, f, nil).Key)
	assert.Equal(t, "5", f.AppliedResourceVersion())
}

// Progress is closed when something is applied, not when something is
// queued: a reader woken by it sees the newer applied resourceVersion.
func TestProgressIsClosedWhenAWriteIsAppliedNotWhenItIsQueued(t *testing.T) {
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{})
	progress := f.Progress()
	require.NoError(t, f.Add(cm("a", "5")))
	assertOpen(t, progress, "a is queued, not applied")
	assert.Equal(t, progress, f.Progress(), "one channel for every waiter until it is closed")

	popOne(t, f, nil)
	assertClosed(t, progress, "a is applied")
	assert.Equal(t, "5", f.AppliedResourceVersion())

	next := f.Progress()
	assertOpen(t, next, "a fresh channel for the next change")
	require.NoError(t, f.Bookmark("9"))
	assertClosed(t, next, "a bookmark on an empty queue is applied at once")
}

func assertOpen(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
		t.Errorf("closed, but should not be: %s", why)
	default:
	}
}

func assertClosed(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Errorf("open, but should be closed: %s", why)
	}
}

// TestAListAtAnOlderResourceVersionIsAppliedAtItsOwn: once a list is all
// popped the cache holds its state and nothing newer, so the applied
// resourceVersion is the list's even when it is older than the one
// before (etcd restored from a backup: the reflector relists,
// reflector.ErrResourceVersionWentBack). Otherwise a read-your-writes
// wait for a write made after the restore (at 60) would be judged
// applied by a resourceVersion (1000) of a state the cache no longer
// holds. Found by an adversarial hunt.
func TestAListAtAnOlderResourceVersionIsAppliedAtItsOwn(t *testing.T) {
	c := cache{}
	f := mustFIFO(deltafifo.Options[*corev1.ConfigMap]{KnownObjects: c})
	require.NoError(t, f.Add(cm("a", "1000")))
	popAll(t, f, c)
	require.Equal(t, "1000", f.AppliedResourceVersion())

	require.NoError(t, f.Replace([]*corev1.ConfigMap{cm("b", "50")}, "50"))
	popAll(t, f, c)
	require.Equal(t, cache{key("b"): cm("b", "50")}, c)
	assert.Equal(t, "50", f.AppliedResourceVersion())
}
