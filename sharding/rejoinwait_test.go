package sharding

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	informer "github.com/listwatch/informer"
)

// The wait before rejoining grows only over terms in a row that Run gave
// up early: RetryPeriod, then twice the last, up to MaxRejoinBackoff. A
// term that Run did not end (a lost renew) rejoins after RetryPeriod and
// starts the backoff over, so the next early give-up waits RetryPeriod
// again, not twice the backoff before the lost term. A cap below
// RetryPeriod never makes a wait shorter than RetryPeriod.
func TestTheRejoinBackoffGrowsOverGiveUpsInARowAndStartsOverAfterAnyOtherTerm(t *testing.T) {
	clock := informer.RealClock{}
	m := &Member{cfg: MemberConfig{RetryPeriod: 2 * time.Second, MaxRejoinBackoff: 10 * time.Second, Clock: clock}}
	gaveUp := termEnd{began: clock.Now(), gaveUp: true}
	lost := termEnd{began: clock.Now()}
	var backoff time.Duration
	var waits []time.Duration
	for _, ended := range []termEnd{gaveUp, gaveUp, gaveUp, gaveUp, lost, gaveUp, gaveUp} {
		var wait time.Duration
		wait, backoff = m.rejoinWait(backoff, ended)
		waits = append(waits, wait)
	}
	s := time.Second
	require.Equal(t, []time.Duration{2 * s, 4 * s, 8 * s, 10 * s, 2 * s, 2 * s, 4 * s}, waits)

	m.cfg.MaxRejoinBackoff = time.Second
	wait, _ := m.rejoinWait(0, termEnd{began: clock.Now(), gaveUp: true})
	require.Equal(t, 2*s, wait, "a cap below RetryPeriod shortened the wait")
	long := termEnd{began: clock.Now().Add(-time.Minute), gaveUp: true}
	wait, next := m.rejoinWait(8*s, long)
	require.Equal(t, []time.Duration{2 * s, 0}, []time.Duration{wait, next}, "a term longer than the cap that Run ended is no early give-up")
}
