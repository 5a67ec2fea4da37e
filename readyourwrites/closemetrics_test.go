package readyourwrites_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
)

// TestTheNextTermsGuardDoesNotReportTheClosedGuardsPendingWrites: Close
// gives the guard's name back so that the next term's guard can take it,
// with the same series; the closed guard's pending count is not the new
// one's, and a closed guard counts nothing more. Found by an adversarial
// hunt: the next guard, with nothing recorded, reported 3 pending
// writes, and kept reporting them while it only held.
func TestTheNextTermsGuardDoesNotReportTheClosedGuardsPendingWrites(t *testing.T) {
	inf, api := newCache(t) // never run: nothing is ever seen
	memory := metrics.NewMemory()
	reg := must(metrics.NewRegistry(memory))
	old := must(readyourwrites.New(readyourwrites.Options{Name: "g", Metrics: reg}))
	cms := readyourwrites.Track(old, inf)
	for i := range 3 {
		require.NoError(t, cms.Wrote(owner, must(api.Create(configMap(fmt.Sprint("cm", i))))))
	}
	pending, _ := memory.Value("listwatch_guard_pending_writes", "g")
	require.Equal(t, 3.0, pending)
	old.Close()

	next := must(readyourwrites.New(readyourwrites.Options{Name: "g", Metrics: reg}))
	defer next.Close()
	held, _, _ := next.Hold(owner)
	require.False(t, held, "the next term's guard has nothing recorded")
	pending, _ = memory.Value("listwatch_guard_pending_writes", "g")
	assert.Equal(t, 0.0, pending, "the next term's guard reports the closed guard's pending writes as its own")

	require.NoError(t, cms.Wrote(owner, must(api.Create(configMap("late")))), "the closed guard's tracker, used late")
	pending, _ = memory.Value("listwatch_guard_pending_writes", "g")
	assert.Equal(t, 0.0, pending, "a closed guard's write counts in the next term's series")
}
