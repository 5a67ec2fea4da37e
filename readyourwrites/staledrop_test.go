package readyourwrites_test

import (
	"testing"
	"time"

	"github.com/listwatch/informer/workqueue"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
)

// A delete waits for the writes of its object recorded before it even
// when their key ran stale past MaxHold (their records dropped): the
// next reconcile's delete of the child it created is not released while
// the cache has applied neither the create nor the delete. (Found by a
// review: the create's version was forgotten with its record.)
func TestADeleteAfterItsCreateRanStaleStillWaitsForTheCreate(t *testing.T) {
	inf, api := newCache(t) // the cache lags: never run
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	guard := must(readyourwrites.New(readyourwrites.Options{MaxHold: 5 * time.Second, Clock: clock}))
	defer guard.Close()
	children := readyourwrites.Track(guard, inf)

	created := must(api.Create(configMap("child")))
	require.NoError(t, children.Wrote(owner, created))
	held, _, _ := guard.Hold(owner)
	require.True(t, held)
	clock.Step(5 * time.Second)
	held, _, _ = guard.Hold(owner)
	require.False(t, held, "MaxHold passed: the create's record is dropped, the key runs stale")

	// The next reconcile deletes the child it created.
	require.NoError(t, api.Delete(informer.KeyFor(created)))
	children.Deleted(owner, informer.KeyFor(created), created.UID, nil)
	held, _, _ = guard.Hold(owner)
	require.True(t, held, "the delete was released at once: the cache has not applied the create recorded before it (LastSyncResourceVersion %q, create at %s)",
		inf.LastSyncResourceVersion(), created.ResourceVersion)
}
