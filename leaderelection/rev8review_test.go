package leaderelection_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A leader's renew conflicts (a third party, kubectl annotate say, wrote
// the Lease since its last write), its slow path reads the Lease, still
// its own, and its update of that version conflicts again (another such
// write between the GET and the PUT). tryAcquireOrRenew answers a
// Conflict of the slow path's update with held == false and no error,
// "another candidate wrote first", so lead ends the term and lostTo
// reads e.observed, the leader's own Lease from that GET: ErrLost says
// "lease kube-system/annotated is held by "leader"". lostTo's doc:
// "names the holder last seen" of "a term that found the Lease
// another's"; alreadyexistsgone_test's round-7 test calls naming the
// losing leader as the holder a bug. Passing means ErrLost does not name
// the losing leader itself as the Lease's holder. (Whether such a term
// should end at all, no other candidate holding the Lease, is the
// larger question: docs/14 ends a term when "another candidate holds
// the Lease".)
func TestALeaderWhoseSlowPathUpdateConflictsDoesNotSayItHoldsTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv := fakeapiserver.New()
		admin := inMemory(t, srv)
		adminClient := must(leaderelection.NewClient(admin.Config()))
		annotate := func(n int) {
			lease := getLease(ctx, t, admin.Config(), "kube-system", "annotated")
			if lease.Annotations == nil {
				lease.Annotations = map[string]string{}
			}
			lease.Annotations["example.com/touched"] = time.Now().Format(time.RFC3339Nano) + string(rune('a'+n))
			require.NoError(t, adminClient.Put().Namespace("kube-system").Resource("leases").Name("annotated").
				Body(lease).Do(ctx).Error())
		}

		var armed atomic.Int32 // PUTs of the leader still to be preceded by a third party's write
		leaderMem := inMemory(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				if n := armed.Add(-1); n >= 0 {
					annotate(int(n))
				}
			}
			srv.ServeHTTP(w, r)
		}))
		leading := make(chan struct{}, 1)
		cfg, _ := config(t, leaderMem.Config(), "kube-system", "annotated", "leader", leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
			OnStoppedLeading: func() {},
		})
		done := make(chan error, 1)
		go func() { done <- must(leaderelection.New(cfg)).Run(ctx) }()
		<-leading
		time.Sleep(time.Second)
		armed.Store(2) // the fast path's PUT and the slow path's PUT each meet a write

		select {
		case err := <-done:
			require.NotContains(t, err.Error(), `held by "leader"`,
				"the leader's ErrLost names the leader itself as the Lease's holder: %v", err)
		case <-time.After(leaseDuration):
			// The term went on: nothing to name.
		}
	})
}

// A standby sees the Lease held by a, then deleted (its first sight of
// the absence starts its wait), and its Run's ctx ends (a caller that
// stops standing for a while: "Run again to stand again"). a puts the
// Lease back and renews on for minutes; then someone deletes it again
// and a is cut off: a's term runs until its last renew plus
// RenewDeadline. The standby Runs again, on the same Elector; its first
// look finds the Lease absent, and e.absent, still true from the old
// Run, with observedAt from minutes ago, says the absence is waited out:
// it creates the Lease at once and leads beside a. No look of the new
// Run is in question: it is the gap between Runs, no look at all, that
// the old first sight is stretched across, while docs/14 bounds the
// unseen put-back-and-delete window by "two successful looks, one to 2.2
// RetryPeriods apart". Passing means the terms do not overlap.
func TestAStandbyThatRunsAgainAfterAGapWaitsOutADeleteItSawBeforeTheGap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
		sd := newSides(t, refused, refused)
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		del := func() { deleteLease(ctx, t, sd.admin, "gap") }

		wg.Go(func() { _ = bubbleCandidate(t, sd.a, "gap", "a", terms).Run(ctx) })
		time.Sleep(time.Second) // a leads
		b := bubbleCandidate(t, sd.b, "gap", "b", terms)
		bctx, bstop := context.WithCancel(ctx)
		bdone := make(chan struct{})
		go func() { defer close(bdone); _ = b.Run(bctx) }()
		time.Sleep(time.Second) // b sees it held

		sd.aFaulty.Store(true) // a cannot put the Lease back yet
		del()
		time.Sleep(1300 * time.Millisecond) // b sees it absent
		bstop()                             // b stops standing
		<-bdone
		sd.aFaulty.Store(false) // a puts it back and renews on
		time.Sleep(2 * time.Minute)
		require.Equal(t, "a", *getLease(ctx, t, sd.admin.Config(), "kube-system", "gap").Spec.HolderIdentity, "a renews")
		sd.aFaulty.Store(true) // a's term ends 3 s after its last renew
		del()

		wg.Go(func() { _ = b.Run(ctx) }) // b stands again
		time.Sleep(20 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "a's term and b's")
		requireDisjoint(t, got)
	})
}
