package readyourwrites

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/memlistwatch"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// A create whose owner ran stale (the cache lagged past MaxHold) is
// still waited for by a delete of unknown UID recorded after it: the
// cache must show the create before the object's absence can be the
// delete, as with integer resourceVersions (where written keeps the
// version whatever the guard dropped). (Found by review: the create was
// forgotten, and the delete judged by absence alone, let go at once.)
func TestANoUIDDeleteAfterACreateThatRanStaleWaitsForTheCreate(t *testing.T) {
	inf, api, g, c, clock := opaqueGuard(t, time.Minute)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(ownerA, cmAt("child", "", "10"))) // A creates child (10)
	held, _, _ := g.Hold(ownerA)
	require.True(t, held)
	clock.Step(61 * time.Second)
	held, _, _ = g.Hold(ownerA) // the cache lagged past MaxHold: A runs stale
	require.False(t, held)

	c.Deleted(ownerB, key, "", nil)   // B deletes child (11), UID unknown
	heldFirst, _, _ := g.Hold(ownerB) // B's queue asks at once

	// The cache catches up with A's create only.
	require.NoError(t, c.Wrote(ownerM, cmAt("marker", "", "12")))
	api.watcher.Add(cmAt("child", "", "10"))
	api.watcher.Add(cmAt("marker", "", "12"))
	untilReleased(t, g, ownerM)
	cached, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	require.Equal(t, "10", cached.GetResourceVersion())

	held, _, _ = g.Hold(ownerB)
	require.True(t, held, "B is let go (first ask held=%v) while the cache holds child at 10, which B deleted (11 has not arrived): A's create, forgotten when A ran stale before B's delete was recorded, is not in B's after", heldFirst)
}

// relistCache is an informer over a memlistwatch, which can relist.
func relistCache(t *testing.T) (*si.Informer[*corev1.ConfigMap], *memlistwatch.ListerWatcher[*corev1.ConfigMap], context.Context) {
	t.Helper()
	api := memlistwatch.New[*corev1.ConfigMap]()
	inf, err := si.New(si.Options[*corev1.ConfigMap]{ListerWatcher: api})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	require.NoError(t, si.WaitForCacheSync(ctx, inf))
	return inf, api, ctx
}

// replaceByRelist deletes child uid-1 and creates child uid-2 while the
// informer is cut off, so that its relist tells handlers of an update
// from uid-1 to uid-2, never of uid-1's delete.
func replaceByRelist(t *testing.T, ctx context.Context, inf *si.Informer[*corev1.ConfigMap], api *memlistwatch.ListerWatcher[*corev1.ConfigMap], afterDelete func()) {
	t.Helper()
	key := informer.Key{Namespace: "demo", Name: "child"}
	api.Disconnect()
	require.NoError(t, api.Delete(key))
	afterDelete()
	_, err := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child", UID: "uid-2"}})
	require.NoError(t, err)
	api.Compact() // the watch cannot resume: the informer relists
	api.Reconnect()
	require.NoError(t, inf.WaitFor(ctx, api.ResourceVersion()))
	cached, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	require.Equal(t, "uid-2", string(cached.GetUID()))
}

// A relist that finds an object deleted and made again tells handlers
// of the old UID's delete (final state unknown), then of the new object:
// a delete of the old UID is marked by it, so a delete of unknown UID
// after that one arrives in its turn, not at MaxHold.
func TestARelistThatReplacesAnObjectLetsTheDeletesAfterItArrive(t *testing.T) {
	inf, api, ctx := relistCache(t)
	g, c, _ := opaqueGuardOn(t, inf, time.Hour)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	_, err := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child", UID: "uid-1"}})
	require.NoError(t, err)
	require.NoError(t, inf.WaitFor(ctx, api.ResourceVersion()))

	replaceByRelist(t, ctx, inf, api, func() { c.Deleted(ownerA, key, "uid-1", nil) }) // A deletes uid-1
	require.NoError(t, api.Delete(key))                                                // B deletes uid-2 ...
	c.Deleted(ownerB, key, "", nil)                                                    // ... its answer unreadable
	marker, err := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "marker", UID: "uid-m"}})
	require.NoError(t, err)
	require.NoError(t, c.Wrote(ownerM, marker))
	untilReleased(t, g, ownerM) // the handler has been told of uid-2's delete
	_, ok := inf.Indexer().Get(key)
	require.False(t, ok)

	held, _, _ := g.Hold(ownerA)
	require.False(t, held)
	held, _, _ = g.Hold(ownerB)
	require.False(t, held, "B is held though the cache and the handler have applied uid-2's delete: A's delete of uid-1, in B's after, is never marked by the relist that replaced uid-1 with uid-2, so B waits for MaxHold and runs stale")
}

// The key of a delete seen once the cache holds another object of its
// name is woken when the handler is told of the relist that replaced it,
// not left to wait for MaxHold. The test plays the arrivals handler.
func TestADeleteSeenByAReplacingRelistWakesItsKey(t *testing.T) {
	inf, api, ctx := relistCache(t)
	g, c, _ := opaqueGuardOn(t, inf, time.Hour)
	require.NoError(t, inf.RemoveEventHandler(c.registration)) // the test plays the arrivals handler
	<-c.registration.Stopped()
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	_, err := api.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "child", UID: "uid-1"}})
	require.NoError(t, err)
	require.NoError(t, inf.WaitFor(ctx, api.ResourceVersion()))
	old, ok := inf.Indexer().Get(key)
	require.True(t, ok)
	c.arrivals.OnAdd(old, false)

	var wake <-chan struct{}
	replaceByRelist(t, ctx, inf, api, func() {
		c.Deleted(ownerA, key, "uid-1", nil)
		var held bool
		held, wake, _ = g.Hold(ownerA)
		require.True(t, held)
	})
	now, _ := inf.Indexer().Get(key)
	c.arrivals.OnDelete(old, true) // what the relist tells the handler:
	c.arrivals.OnAdd(now, false)   // uid-1 deleted, uid-2 added

	select {
	case <-wake:
	default:
		held, _, _ := g.Hold(ownerA)
		t.Fatalf("A's wake channel is still open after the handler was told of the relist, though Hold now says held=%v: A waits for MaxHold", held)
	}
}

// One create of child whose version the handler is never told of (a
// relist jumped past it, or the handler passed it before Wrote looked)
// never arrives at its version, but its object's delete says it is past.
// While owners create and delete child in turn, each delete recorded
// while the previous is still waited for, the deletes after that create
// wait for it only until its object is deleted: then each is seen in
// turn, no owner runs stale, and memory follows the writes in flight.
func TestASkippedCreateHoldsLaterDeletesOfItsKeyOnlyUntilItsObjectIsDeleted(t *testing.T) {
	_, api, g, c, clock := opaqueGuard(t, time.Minute)
	key := informer.Key{Namespace: "demo", Name: "child"}
	owner := func(i int) informer.Key { return informer.Key{Namespace: "demo", Name: fmt.Sprintf("o-%d", i)} }

	rv := 10
	next := func() string { rv++; return fmt.Sprint(rv) }
	skipped := informer.Key{Namespace: "demo", Name: "s"}
	require.NoError(t, c.Wrote(skipped, cmAt("child", "uid-s", next()))) // never reaches the handler at this version
	api.watcher.Add(cmAt("child", "uid-s", next()))                      // the cache has it at a later one
	deleted := next()
	c.Deleted(owner(0), key, "", nil)
	api.watcher.Delete(cmAt("child", "uid-s", deleted))
	created := next()
	uid := func(rv string) types.UID { return types.UID("uid-" + rv) }
	require.NoError(t, c.Wrote(owner(0), cmAt("child", uid(created), created)))
	c.Deleted(owner(0), key, "", nil)
	api.watcher.Add(cmAt("child", uid(created), created))
	const rounds = 50
	stale := 0
	for i := 1; i <= rounds; i++ {
		deletedPrev, markerRV := next(), next()
		createdPrev := created
		created = next()
		require.NoError(t, c.Wrote(owner(i), cmAt("child", uid(created), created)))
		c.Deleted(owner(i), key, "", nil)
		api.watcher.Delete(cmAt("child", uid(createdPrev), deletedPrev)) // owner i-1's delete arrives
		marker := informer.Key{Namespace: "demo", Name: fmt.Sprintf("m-%d", i)}
		require.NoError(t, c.Wrote(marker, cmAt(marker.Name, "", markerRV)))
		api.watcher.Add(cmAt(marker.Name, "", markerRV))
		untilReleased(t, g, marker)
		if held, _, _ := g.Hold(owner(i - 1)); held {
			clock.Step(61 * time.Second)
			held, _, _ = g.Hold(owner(i - 1))
			require.False(t, held)
			stale++
		}
		api.watcher.Add(cmAt("child", uid(created), created)) // owner i's create arrives
	}

	kept := reachable(c)
	require.LessOrEqual(t, len(kept), 8, "arrivals keeps %d writes of child after %d rounds: one skipped create is needed, through after, by every later delete", len(kept), rounds)
	require.Zero(t, stale, "%d of %d owners ran stale though their create and delete reached the cache", stale, rounds)
	t.Logf("%d of %d owners ran stale", stale, rounds)
}

// With integer resourceVersions the same schedule as
// TestANoUIDDeleteAfterACreateThatRanStaleWaitsForTheCreate holds B:
// written keeps 10 until the cache applies it, whatever the guard dropped.
func TestWithIntegerVersionsANoUIDDeleteAfterACreateThatRanStaleWaitsForTheCreate(t *testing.T) {
	inf, _ := scriptedCache(t, "1")
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	g, err := New(Options{MaxHold: time.Minute, Clock: clock})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	key := informer.Key{Namespace: "demo", Name: "child"}
	require.NoError(t, c.Wrote(ownerA, cmAt("child", "", "10")))
	g.Hold(ownerA)
	clock.Step(61 * time.Second)
	held, _, _ := g.Hold(ownerA)
	require.False(t, held)
	c.Deleted(ownerB, key, "", nil)
	held, _, _ = g.Hold(ownerB)
	require.True(t, held)
}
