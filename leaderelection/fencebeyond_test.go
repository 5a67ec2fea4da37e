package leaderelection_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// The one order docs/14 leaves beyond any fence: as in
// TestALeaderWhoseLeaseChangedHandsEndsItsTerm, a's Lease is deleted
// while a's requests fail, b (which never saw it) creates it, leads with
// a greater fence and releases it; then the Lease is deleted a second
// time, before a's requests work again. No write is left to show that
// b's term came between: a's renew finds the Lease absent, puts it back,
// and a goes on leading with the fence of its first write, below b's. A
// reader that accepted b's fence refuses the current leader's writes.
func TestALeaderWhoseLeaseIsDeletedAgainAfterAnotherTermGoesOnWithItsLowerFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first, second, _, holder := leaseChangedHands(t, true)
		require.Equal(t, "a", holder, "a put the Lease back")
		require.NoError(t, first.ctx.Err(), "a's term goes on")
		require.Less(t, first.fence, second.fence, "with the fence of its first write, below the fence of b's term, which came between")
	})
}
