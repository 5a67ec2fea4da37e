package reflector_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer/reflector"
)

// A write elsewhere moves the server's resourceVersion while the watched
// namespace sees no event; the bookmark before the watch's timeout
// carries the reflector's resourceVersion past it, and the next watch
// starts from there. On the fake API server, in a synctest bubble: its
// bookmark before timeoutSeconds is held to the real watch cache's by
// fakeapiserver's conformance test.
func TestBookmarksAdvanceTheResourceVersionWithoutObjectChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newFakeServer(t)
		cms := newConfigMaps(t, s.mem.Config(), "default")
		cms.create("a")
		// The server sends a bookmark 2s before a watch's deadline.
		l := cmReflector(t, s.config(), "default", func(o *reflector.Options[*corev1.ConfigMap]) {
			o.WatchTimeout = 5 * time.Second
			o.WatchTimeoutJitter = -1
		})
		synctest.Wait()
		require.Len(t, l.trace.of(reflector.KindWatch), 1, "listed and watching")
		listed := mustInt(t, l.r.LastSyncResourceVersion())

		// A write elsewhere moves the server's resourceVersion; this namespace sees no event.
		elsewhere := newConfigMaps(t, s.mem.Config(), "kube-public").create("x")
		time.Sleep(5 * time.Second) // the watch's timeout
		synctest.Wait()
		bookmarks := l.trace.of(reflector.KindBookmark)
		require.Len(t, bookmarks, 1, "one bookmark, 2s before the timeout")
		assert.GreaterOrEqual(t, mustInt(t, bookmarks[0].ResourceVersion), mustInt(t, elsewhere.ResourceVersion), "past the write elsewhere")
		assert.Greater(t, mustInt(t, l.r.LastSyncResourceVersion()), listed, "the bookmark moved the resourceVersion on")
		assert.Zero(t, l.store.count("add")+l.store.count("update")+l.store.count("delete"), "with no object changed")

		watches := l.trace.of(reflector.KindWatch)
		require.Len(t, watches, 2, "the server ended the first watch at its timeout")
		assert.Equal(t, bookmarks[0].ResourceVersion, watches[1].ResourceVersion, "the next watch starts from the bookmark")
	})
}
