package readyourwrites

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/informer"
	si "github.com/listwatch/informer/sharedinformer"
)

// An earlier delete the guard sees by its object's absence (the indexer
// runs ahead of the arrivals handler) is dropped before the handler is
// told of it; a later delete of unknown UID that came after it must still
// see it arrive, in the handler's order, and not wait for MaxHold.
//
// The setup is that of TestAnUnknownDeleteIsNotTakenForAnEarlierObjectsDeleteRecordedLate,
// with A asked about (Hold) while the handler is behind the cache, as
// TestAnOpaqueDeleteOfUnknownUIDWakesWhenTheWriteBeforeItArrives does; the
// test plays the arrivals handler so that its lag is the same in every run.
func TestADeleteSeenByAbsenceBeforeTheHandlerStillLetsALaterDeleteArrive(t *testing.T) {
	inf, api, g, c, _ := opaqueGuard(t, time.Hour)
	require.NoError(t, inf.RemoveEventHandler(c.registration)) // the test plays the arrivals handler
	<-c.registration.Stopped()
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerC := informer.Key{Namespace: "demo", Name: "c"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	api.watcher.Add(cmAt("child", "uid-1", "10"))
	untilCached(t, inf, key)
	c.arrivals.OnAdd(cmAt("child", "uid-1", "10"), false)

	c.Deleted(ownerA, key, "uid-1", nil)                              // A deletes uid-1 (11)
	require.NoError(t, c.Wrote(ownerB, cmAt("child", "uid-2", "13"))) // B creates child again (13)
	c.Deleted(ownerC, key, "", nil)                                   // C deletes it (14), UID unknown

	// The cache applies uid-1's delete; the handler is behind. A is asked
	// about: the cache no longer holds uid-1, so A is let go (right), and
	// its arrival is forgotten, not marked.
	api.watcher.Delete(cmAt("child", "uid-1", "11"))
	untilGoneFromCache(t, inf, key)
	held, _, _ := g.Hold(ownerA)
	require.False(t, held)

	// The handler catches up; then the cache, and the handler, apply
	// uid-2's create and its delete (C's).
	c.arrivals.OnDelete(cmAt("child", "uid-1", "11"), false)
	api.watcher.Add(cmAt("child", "uid-2", "13"))
	untilCached(t, inf, key)
	c.arrivals.OnAdd(cmAt("child", "uid-2", "13"), false)
	api.watcher.Delete(cmAt("child", "uid-2", "14"))
	untilGoneFromCache(t, inf, key)
	c.arrivals.OnDelete(cmAt("child", "uid-2", "14"), false)

	held, _, _ = g.Hold(ownerC)
	require.False(t, held, "C is held though the cache and the handler have applied uid-1's delete, uid-2's create (13) and uid-2's delete (14): A's arrival, in C's after, was never marked")
}

// A create dropped because its owner ran stale (the cache lagged past
// MaxHold) is still waited for while another owner's delete of unknown
// UID came after it: that delete arrives once the cache shows the create
// and then a delete, not at its own MaxHold.
func TestACreateDroppedStaleStillLetsADeleteAfterItArrive(t *testing.T) {
	inf, api, g, c, clock := opaqueGuard(t, time.Minute)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(ownerA, cmAt("child", "", "10"))) // A creates child (10)
	held, _, _ := g.Hold(ownerA)
	require.True(t, held)
	clock.Step(30 * time.Second)
	c.Deleted(ownerB, key, "", nil) // B deletes it (11), UID unknown
	held, _, _ = g.Hold(ownerB)
	require.True(t, held)
	clock.Step(31 * time.Second)
	held, _, _ = g.Hold(ownerA) // the cache lagged past MaxHold: A runs stale, its create is forgotten
	require.False(t, held)

	// The cache catches up: the create, then B's delete.
	api.watcher.Add(cmAt("child", "", "10"))
	api.watcher.Delete(cmAt("child", "", "11"))
	require.NoError(t, c.Wrote(ownerM, cmAt("marker", "", "12")))
	api.watcher.Add(cmAt("marker", "", "12"))
	untilReleased(t, g, ownerM) // the handler has been told of all three
	_, ok := inf.Indexer().Get(key)
	require.False(t, ok)

	held, _, _ = g.Hold(ownerB)
	require.False(t, held, "B is held though the cache has applied A's create (10) and then B's delete (11): A's create, in B's after, was forgotten when A ran stale and can never be marked, so B waits for its own MaxHold and runs stale too")
}

// No hold spreads from a create dropped stale: a later create and delete
// of the key, both applied by the cache, let their owner go.
func TestADeleteAfterACreateDroppedStaleDoesNotHoldLaterDeletesOfItsKey(t *testing.T) {
	inf, api, g, c, clock := opaqueGuard(t, time.Minute)
	ownerA := informer.Key{Namespace: "demo", Name: "a"}
	ownerB := informer.Key{Namespace: "demo", Name: "b"}
	ownerD := informer.Key{Namespace: "demo", Name: "d"}
	ownerM := informer.Key{Namespace: "demo", Name: "m"}
	key := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(ownerA, cmAt("child", "", "10")))
	g.Hold(ownerA)
	clock.Step(30 * time.Second)
	c.Deleted(ownerB, key, "", nil)
	g.Hold(ownerB)
	clock.Step(31 * time.Second)
	held, _, _ := g.Hold(ownerA) // A runs stale
	require.False(t, held)
	api.watcher.Add(cmAt("child", "", "10"))
	api.watcher.Delete(cmAt("child", "", "11"))

	// D, 1s later, creates child again and deletes it; both reach the
	// cache, in order, before B's MaxHold.
	clock.Step(time.Second)
	require.NoError(t, c.Wrote(ownerD, cmAt("child", "", "12")))
	api.watcher.Add(cmAt("child", "", "12"))
	untilCached(t, inf, key)
	c.Deleted(ownerD, key, "", nil) // 13
	api.watcher.Delete(cmAt("child", "", "13"))
	require.NoError(t, c.Wrote(ownerM, cmAt("marker", "", "14")))
	api.watcher.Add(cmAt("marker", "", "14"))
	untilReleased(t, g, ownerM)

	held, _, _ = g.Hold(ownerD)
	require.False(t, held, "D is held though the cache has applied its create (12) and then its delete (13): B's delete, never to arrive, is in D's after")
}

// A write no longer waited for lets go of the writes it came after:
// while a key's deletes of unknown UID overlap (the next recorded before
// the previous arrives), the arrivals kept follow the writes in flight,
// not every delete ever made.
func TestNoUIDDeletesOfAChurningKeyKeepOnlyTheWritesInFlight(t *testing.T) {
	_, api, g, c, _ := opaqueGuard(t, time.Hour)
	key := informer.Key{Namespace: "demo", Name: "child"}
	owner := func(i int) informer.Key { return informer.Key{Namespace: "demo", Name: fmt.Sprintf("o-%d", i)} }

	// versions increase with every change (the reflector restarts a
	// watch whose integer versions go back)
	rv := 10
	next := func() string { rv++; return fmt.Sprint(rv) }
	created := next()
	require.NoError(t, c.Wrote(owner(0), cmAt("child", "", created)))
	c.Deleted(owner(0), key, "", nil)
	api.watcher.Add(cmAt("child", "", created))
	const rounds = 100
	for i := 1; i <= rounds; i++ {
		deletedPrev, markerRV := next(), next()
		created = next()
		// owner i creates child again and deletes it while owner i-1's
		// delete is still on its way to the cache
		require.NoError(t, c.Wrote(owner(i), cmAt("child", "", created)))
		c.Deleted(owner(i), key, "", nil)
		api.watcher.Delete(cmAt("child", "", deletedPrev)) // owner i-1's delete arrives
		// a marker after it, so that the handler has been told of the
		// delete before owner i-1 is asked about (else absence may show
		// it first: TestADeleteSeenByAbsenceBeforeTheHandlerStillLetsALaterDeleteArrive)
		marker := informer.Key{Namespace: "demo", Name: fmt.Sprintf("m-%d", i)}
		require.NoError(t, c.Wrote(marker, cmAt(marker.Name, "", markerRV)))
		api.watcher.Add(cmAt(marker.Name, "", markerRV))
		untilReleased(t, g, marker)
		untilReleased(t, g, owner(i-1))
		api.watcher.Add(cmAt("child", "", created)) // owner i's create arrives
	}
	require.LessOrEqual(t, g.Pending(), 2, "the guard keeps only the last owner's records")

	kept := reachable(c)
	c.arrivals.mu.Lock()
	waiting := len(c.arrivals.waiting[key])
	c.arrivals.mu.Unlock()
	require.LessOrEqual(t, len(kept), 8, "arrivals waits for %d writes of child but keeps %d reachable through after, after %d deletes of it: memory follows the writes made, not those in flight", waiting, len(kept), rounds+1)
}

func untilGoneFromCache(t *testing.T, inf *si.Informer[*corev1.ConfigMap], key informer.Key) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		progress := inf.Progress()
		if _, ok := inf.Indexer().Get(key); !ok {
			return
		}
		select {
		case <-progress:
		case <-deadline:
			t.Fatal("never gone")
		}
	}
}
