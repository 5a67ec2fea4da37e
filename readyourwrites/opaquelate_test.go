package readyourwrites_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/workqueue"
)

// With OpaqueResourceVersions a write is seen as its version arrives, so
// the version must arrive after the write is recorded. One the cache
// held and moved past before that (a write recorded late, through
// Wrote, while another writer's change followed it into the cache) never
// arrives: nothing orders the cache's 5 after the written 4. The key is
// held for MaxHold, late but never early, as for a version the cache
// skips.
func TestWithOpaqueResourceVersionsAWriteTheCacheMovedPastBeforeItWasRecordedHoldsItsKeyForMaxHold(t *testing.T) {
	inf, api := perObjectCache(t)
	clock := workqueue.NewFakeClock(time.Unix(0, 0))
	guard := must(readyourwrites.New(readyourwrites.Options{OpaqueResourceVersions: true, Clock: clock}))
	cms := readyourwrites.Track(guard, inf)
	// handled returns, for a witness key that awaits web at rv, a func
	// that waits until Track's handler, which lags the cache on a
	// goroutine of its own, has been told of web at rv, and so of every
	// change the cache applied before it. (A witness of db itself would
	// not do: a write recorded after owner's is taken as later than it.)
	// Versions grow across objects here, so that the reflector, which
	// relists when a version goes back, keeps its one watch.
	handled := func(witness, rv string) func() {
		t.Helper()
		key := informer.Key{Namespace: "demo", Name: witness}
		require.NoError(t, cms.Wrote(key, at(configMap("web"), rv)))
		held, wake, _ := guard.Hold(key)
		require.True(t, held, "the cache does not hold web at %s yet", rv)
		return func() { t.Helper(); waitOn(t, wake) }
	}

	wait := handled("witness-6", "6")
	api.watcher.Modify(at(configMap("db"), "4")) // the write, its answer not yet recorded
	api.watcher.Modify(at(configMap("db"), "5")) // another writer's, after it
	api.watcher.Modify(at(configMap("web"), "6"))
	wait()
	require.NoError(t, cms.Wrote(owner, at(configMap("db"), "4")))

	held, _, within := guard.Hold(owner)
	require.True(t, held, "db at 4 came and went before the write was recorded: it never arrives")
	wait = handled("witness-8", "8")
	api.watcher.Modify(at(configMap("db"), "7"))
	api.watcher.Modify(at(configMap("web"), "8"))
	wait()
	held, _, _ = guard.Hold(owner)
	require.True(t, held, "nor does a later change of db say anything of 4")
	clock.Step(within)
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "MaxHold passed: it runs, stale")
}
