package readyourwrites

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

// By default a delete waits for the writes of its object recorded before
// it only where their resourceVersions are integers: one that is not can
// never be known to be applied, so none is kept for a delete to wait on
// (TestADeleteAfterASeenWriteIsNotHeldWhenResourceVersionsAreNotIntegers
// shows why). A create recorded by one key, not yet in the cache, does
// not hold a delete of that object recorded by another: absence alone
// lets it go. OpaqueResourceVersions is the option for such a server.
func TestByDefaultADeleteDoesNotWaitForAnEarlierWriteWhoseVersionIsNotAnInteger(t *testing.T) {
	inf, _ := scriptedCache(t, "a0")
	g, err := New(Options{MaxHold: time.Hour, Clock: workqueue.NewFakeClock(time.Unix(0, 0))})
	require.NoError(t, err)
	defer g.Close()
	c := Track(g, inf)
	creator := informer.Key{Namespace: "demo", Name: "creator"}
	deleter := informer.Key{Namespace: "demo", Name: "deleter"}
	child := informer.Key{Namespace: "demo", Name: "child"}

	require.NoError(t, c.Wrote(creator, cmAt("child", "uid-1", "a1"))) // not in the cache yet
	require.NoError(t, c.Deleted(deleter, child, "uid-1", nil))

	held, _, _ := g.Hold(deleter)
	require.False(t, held, "absence alone lets the delete go")
	held, _, _ = g.Hold(creator)
	require.True(t, held, "the create itself is still awaited")
}
