package leaderelection_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// silentBound is takeoverBound where an attempt takes no time, as on the
// in-memory fake API server in a synctest bubble: the standby sees the
// last version on its first look after it landed, waits out the lease,
// and takes it on its first look after that. The four AttemptTimeouts of
// takeoverBound are what real round trips may add to it.
//
//	wait → LeaseDuration → wait
var silentBound = leaseDuration + 2*maxAcquireWait

// Three candidates; the leader goes silent (from a moment on its requests
// hang, as a killed process's would never arrive), twice. Each time a
// standby leads after the silent leader's last renew plus LeaseDuration,
// and within silentBound of that renew; the
// Lease counts one more transition. On the fake API server, in a synctest
// bubble, so both bounds are checked on simulated time, which a loaded
// machine does not stretch. TestAStandbyLeadsOnceAKilledLeadersLeaseExpires
// does the same with real processes and SIGKILL, against kube-apiserver.
func TestAStandbyLeadsWithinTheBoundAfterTheLeaderGoesSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		direct := inMemory(t, srv)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		ts := newTerms()
		guard := takeoverBound + time.Minute // a guard against hanging, not a timing

		type sighting struct{ who, leader string }
		seenCh := make(chan sighting, 64)
		silent := map[string]*atomic.Bool{}
		for _, id := range []string{"a", "b", "c"} {
			silent[id] = &atomic.Bool{}
			mem := faultySide(srv, silent[id], fakeapiserver.Fault{Hang: true})
			t.Cleanup(mem.Close)
			cfg, _ := config(t, mem.Config(), "kube-system", "silent", id, ts.callbacks(id, func(leader string) {
				seenCh <- sighting{id, leader}
			}))
			el := must(leaderelection.New(cfg))
			wg.Go(func() { el.Run(ctx) })
		}

		leader := awaitTerm(t, ts, guard, "a first leader")
		for round := 1; round <= 2; round++ {
			// Every live standby has seen this leader: it goes silent mid-term.
			seen := map[string]bool{leader.id: true}
			for id, s := range silent {
				if s.Load() {
					seen[id] = true
				}
			}
			for len(seen) < len(silent) {
				select {
				case s := <-seenCh:
					if s.leader == leader.id {
						seen[s.who] = true
					}
				case <-time.After(guard):
					t.Fatalf("the standbys never saw %s", leader.id)
				}
			}
			synctest.Wait() // every candidate waits for its next attempt: no request is in flight
			silencedAt := time.Now()
			silent[leader.id].Store(true)
			last := getLease(ctx, t, direct.Config(), "kube-system", "silent") // its last write that landed
			require.Equal(t, leader.id, *last.Spec.HolderIdentity)

			next := awaitTerm(t, ts, guard, "a standby to lead")
			require.False(t, silent[next.id].Load(), "%s, silent, led", next.id)
			// RenewTime is the last renew's send time, and in the bubble a
			// request lands when it is sent; stored to the µs, so it may be
			// up to 1µs before the send.
			lastRenew := last.Spec.RenewTime.Time
			took := next.start.Sub(lastRenew)
			t.Logf("round %d: %s led %v after %s's last renew, %v after it went silent (bounds: after lease %v, within %v = %v + 2×%v)",
				round, next.id, took, leader.id, next.start.Sub(silencedAt), leaseDuration,
				silentBound, leaseDuration, maxAcquireWait)
			require.Greater(t, took, leaseDuration, "%s led before the Lease could expire", next.id)
			require.LessOrEqual(t, took, silentBound+time.Microsecond)

			lease := getLease(ctx, t, direct.Config(), "kube-system", "silent")
			require.Equal(t, next.id, *lease.Spec.HolderIdentity)
			require.EqualValues(t, round, *lease.Spec.LeaseTransitions)
			leader = next
		}
	})
}
