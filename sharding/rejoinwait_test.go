package sharding

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The wait before rejoining grows only over terms in a row that Run gave
// up early: RetryPeriod, then twice the last, up to MaxRejoinBackoff. A
// term that Run did not end (a lost renew) rejoins after RetryPeriod and
// starts the backoff over, so the next early give-up waits RetryPeriod
// again, not twice the backoff before the lost term. A cap below
// RetryPeriod never makes a wait shorter than RetryPeriod. A term counts
// as given up early by how long it lasted until Run returned, not until
// the release after it, which may take an AttemptTimeout.
func TestTheRejoinBackoffGrowsOverGiveUpsInARowAndStartsOverAfterAnyOtherTerm(t *testing.T) {
	m := &Member{cfg: MemberConfig{RetryPeriod: 2 * time.Second, MaxRejoinBackoff: 10 * time.Second}}
	gaveUp := termEnd{began: time.Unix(1, 0), gaveUp: true, lasted: time.Second}
	lost := termEnd{began: time.Unix(1, 0)}
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
	wait, _ := m.rejoinWait(0, termEnd{began: time.Unix(1, 0), gaveUp: true, lasted: time.Millisecond})
	require.Equal(t, 2*s, wait, "a cap below RetryPeriod shortened the wait")
	long := termEnd{began: time.Unix(1, 0), gaveUp: true, lasted: time.Minute}
	wait, next := m.rejoinWait(8*s, long)
	require.Equal(t, []time.Duration{2 * s, 0}, []time.Duration{wait, next}, "a term longer than the cap that Run ended is no early give-up")
	wait, next = m.rejoinWait(8*s, termEnd{})
	require.Equal(t, []time.Duration{2 * s, 8 * s}, []time.Duration{wait, next}, "a join that began no term started the backoff over")
}
