package readyourwrites

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// With OpaqueResourceVersions, a delete of unknown UID (Deleted with
// uid "") after a create recorded under another owner is the delete of
// that create's object: it is seen when that object's delete arrives,
// and the arrival wakes the key. The arrivals handler runs behind the
// cache: here B is asked about (Hold) once the cache has applied the
// create and the delete, before the handler was told of either, and is
// held; when the handler catches up, B's wake channel closes, though the
// informer changes no more. (Found by a review: the record woke only on
// the informer's changes, and B waited for MaxHold, counted stale.)
//
// The test plays the arrivals handler (its registration removed), so
// that its lag behind the cache is the same in every run.
func TestAnOpaqueDeleteOfUnknownUIDWakesWhenTheWriteBeforeItArrives(t *testing.T) {
	inf, api := scriptedCache(t, "1")
	g, err := New(Options{OpaqueResourceVersions: true, MaxHold: time.Hour})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	require.NoError(t, c.trackErr)
	require.NoError(t, inf.RemoveEventHandler(c.registration)) // the test plays the arrivals handler
	<-c.registration.Stopped()

	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	created := cmAt("child", "uid-child", "10")
	key := informer.KeyFor(created)
	// Both recorded before the cache shows either (a scripted watch: the
	// test sends the events), as the API server answers them.
	require.NoError(t, c.Wrote(ownerA, created))
	c.Deleted(ownerB, key, "", nil) // the DELETE's answer could not be decoded: UID unknown

	// The cache applies the create and the delete; the handler is behind.
	api.watcher.Add(created)
	api.watcher.Delete(cmAt("child", "uid-child", "11"))
	api.watcher.Add(cmAt("marker", "", "12"))
	untilCached(t, inf, informer.Key{Namespace: "demo", Name: "marker"})
	_, inCache := inf.Indexer().Get(key)
	require.False(t, inCache)
	held, wake, _ := g.Hold(ownerB)
	require.True(t, held, "the create has not arrived yet: B waits")

	// The handler catches up: the create arrives, then its delete.
	c.arrivals.OnAdd(created, false)
	c.arrivals.OnDelete(cmAt("child", "uid-child", "11"), false)

	select {
	case <-wake:
	case <-time.After(time.Minute):
		heldNow, _, _ := g.Hold(ownerB)
		t.Fatalf("the write before the delete arrived and the cache no longer holds the object (Hold now says held=%v), but B's wake channel never closed: a queue waits until MaxHold, and counts B stale", heldNow)
	}
}
