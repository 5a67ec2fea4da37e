package readyourwrites

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
)

// With OpaqueResourceVersions and answers without UIDs, a delete of the
// key already on its way when the owner recorded its writes is an
// earlier object's: the cache holds child (at 5), whose delete (at 6,
// by someone else) has not reached it; the owner creates child again
// (10) and deletes it (11). When the earlier delete and then the create
// arrive, the owner is still held: its delete comes after its create.
// (Found by a review: any delete of the key marked it.)
func TestAnEarlierObjectsDeleteDoesNotMarkANoUIDDelete(t *testing.T) {
	inf, api, g, c, _ := opaqueGuard(t, time.Hour)
	owner := informer.Key{Namespace: "demo", Name: "web"}
	marker := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	api.watcher.Add(cmAt("child", "", "5")) // the earlier object
	untilCached(t, inf, key)

	require.NoError(t, c.Wrote(owner, cmAt("child", "", "10"))) // create, answered without a UID
	c.Deleted(owner, key, "", nil)                              // delete (at 11), UID unknown
	require.NoError(t, c.Wrote(marker, cmAt("marker", "", "12")))

	api.watcher.Delete(cmAt("child", "", "6")) // the earlier object's delete
	api.watcher.Add(cmAt("child", "", "10"))   // owner's create; its delete (11) has not arrived
	api.watcher.Add(cmAt("marker", "", "12"))
	untilReleased(t, g, marker) // the arrivals handler has been told of all three

	cached, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	require.Equal(t, "10", cached.GetResourceVersion())
	held, _, _ := g.Hold(owner)
	require.True(t, held, "owner was released while the cache holds child at 10, which its reconcile deleted (the delete at 11 has not arrived): the earlier object's delete marked it")
}

// The no-UID delete's arrival is forgotten when its key runs stale, and
// gone once its delete arrives; the create its key ran stale on is
// remembered, for deletes recorded later, until the cache shows it:
// then nothing is left waiting.
func TestANoUIDDeleteLeavesNothingWaitingOnceTheCacheCaughtUp(t *testing.T) {
	_, api, g, c, clock := opaqueGuard(t, time.Minute)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	keyA := informer.Key{Namespace: "demo", Name: "child-a"}

	// A: does not arrive, runs stale. (Its version is above B's: the
	// scripted watch must not go back.)
	require.NoError(t, c.Wrote(ownerA, cmAt("child-a", "", "30")))
	c.Deleted(ownerA, keyA, "", nil)
	held, _, _ := g.Hold(ownerA)
	require.True(t, held)
	clock.Step(2 * time.Minute)
	held, _, _ = g.Hold(ownerA)
	require.False(t, held)

	// B: arrives and is released.
	keyB := informer.Key{Namespace: "demo", Name: "child-b"}
	require.NoError(t, c.Wrote(ownerB, cmAt("child-b", "", "20")))
	c.Deleted(ownerB, keyB, "", nil)
	api.watcher.Add(cmAt("child-b", "", "20"))
	api.watcher.Delete(cmAt("child-b", "", "21"))
	untilReleased(t, g, ownerB)

	// A's create reaches the cache at last.
	require.NoError(t, c.Wrote(ownerB, cmAt("marker", "", "31")))
	api.watcher.Add(cmAt("child-a", "", "30"))
	api.watcher.Add(cmAt("marker", "", "31"))
	untilReleased(t, g, ownerB) // the handler has been told of both

	c.arrivals.mu.Lock()
	left := len(c.arrivals.waiting)
	c.arrivals.mu.Unlock()
	require.Zero(t, left, "arrivals still waits for %d keys", left)
	require.Zero(t, g.Pending())
}

// A delete of unknown UID is not taken for any earlier object's: child
// uid-1 is in the cache at 10; A deletes it (11), B creates child again
// (uid-2, 13), C deletes that (14), its answer unreadable, and A's
// record lands after B's (records of different owners race). C is not
// let go when uid-1's delete arrives, while the cache has applied
// neither uid-2's create nor its delete. (Found by a review: the UID of
// the last record was guessed, which record order cannot tell.)
func TestAnUnknownDeleteIsNotTakenForAnEarlierObjectsDeleteRecordedLate(t *testing.T) {
	inf, api, g, c, _ := opaqueGuard(t, time.Hour)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerC := informer.Key{Namespace: "demo", Name: "c"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	api.watcher.Add(cmAt("child", "uid-1", "10"))
	untilCached(t, inf, key)

	require.NoError(t, c.Wrote(ownerB, cmAt("child", "uid-2", "13"))) // B's create (13), recorded first
	c.Deleted(ownerA, key, "uid-1", nil)                              // A's delete (11), recorded late
	c.Deleted(ownerC, key, "", nil)                                   // C's delete (14), UID unknown
	require.NoError(t, c.Wrote(ownerM, cmAt("marker", "uid-m", "12")))

	api.watcher.Delete(cmAt("child", "uid-1", "11"))
	api.watcher.Add(cmAt("marker", "uid-m", "12"))
	untilReleased(t, g, ownerM) // the arrivals handler has been told of both

	held, _, _ := g.Hold(ownerC)
	require.True(t, held, "C's delete of child was released: the cache has applied uid-1's delete only, not uid-2's create (13) recorded before C's delete, nor uid-2's delete")
}
