package readyourwrites_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

	api.watcher.Modify(at(configMap("db"), "4")) // the write, its answer not yet recorded
	api.watcher.Modify(at(configMap("db"), "5")) // another writer's, after it
	require.NoError(t, inf.WaitFor(t.Context(), "5"))
	require.NoError(t, cms.Wrote(owner, at(configMap("db"), "4")))

	held, _, within := guard.Hold(owner)
	require.True(t, held, "db at 4 came and went before the write was recorded: it never arrives")
	api.watcher.Modify(at(configMap("db"), "6"))
	require.NoError(t, inf.WaitFor(t.Context(), "6"))
	held, _, _ = guard.Hold(owner)
	require.True(t, held, "nor does a later change of db say anything of 4")
	clock.Step(within)
	held, _, _ = guard.Hold(owner)
	assert.False(t, held, "MaxHold passed: it runs, stale")
}
