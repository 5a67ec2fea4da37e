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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
)

// A leader's last look sees its Lease deleted (its creates are refused),
// and its term ends at its renew deadline; without ReleaseOnCancel its
// next look, had its caller Run again at once, would come at most
// AttemptTimeout + RetryPeriod (4 s here) after that last look. Its caller
// Runs again 6.5 s after the last look: longer than a standby's looks are
// ever apart (AttemptTimeout + 2.2·RetryPeriod, 5.2 s), though within a
// leader's (2·AttemptTimeout + RetryPeriod, 7 s). Meanwhile c, which
// never saw the Lease, created it, led, and was cut off as someone
// deleted it again. b's look, a standby's, is held to a standby's
// spacing: it counts as failed, b waits afresh, and the terms do not
// overlap. (Judged by the earlier look's kind, a leader's, b kept its
// 7.7 s old sight and led beside c.)
func TestAFormerLeaderRunAgainAfterAGapLongerThanAStandbysSpacingWaitsOutADeleteItSawAsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		admin := fakeapiserver.ServeInMemory(srv)
		defer admin.Close()
		var bPostFails, cFails atomic.Bool
		var lastGet atomic.Int64
		memB := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodGet {
				lastGet.Store(time.Now().UnixNano())
			}
			if bPostFails.Load() && r.Method == http.MethodPost {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable, Latency: 200 * time.Millisecond}
			}
			return fakeapiserver.Fault{}
		}))
		defer memB.Close()
		memC := faultySide(srv, &cFails, fakeapiserver.Fault{Status: http.StatusServiceUnavailable})
		defer memC.Close()
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		b := bubbleCandidate(t, memB, "former2", "b", terms, func(c *leaderelection.Config) {
			c.RetryPeriod, c.AttemptTimeout = time.Second, 3*time.Second
			c.LeaseDuration, c.RenewDeadline = 5*time.Second, 3*time.Second
		})
		rerunAt := make(chan time.Time, 1)
		wg.Go(func() {
			_ = b.Run(ctx) // t=0: b creates the Lease and leads; its term ends at 5.0
			last := time.Unix(0, lastGet.Load())
			at := last.Add(6500 * time.Millisecond)
			rerunAt <- at
			time.Sleep(time.Until(at))
			_ = b.Run(ctx) // b stands again
		})
		time.Sleep(2300 * time.Millisecond)
		bPostFails.Store(true) // t=2.3: b cannot put the Lease back
		deleteLease(ctx, t, admin, "former2")
		// b looks (a leader's look) at 3.0 and 4.2, sees it absent, and its
		// create is refused; its term ends at 5.0, its last renew (2.0) + 3 s.
		time.Sleep(3700 * time.Millisecond)
		bPostFails.Store(false)
		// t=6: c, which never saw the Lease, creates it at once and leads.
		wg.Go(func() {
			_ = bubbleCandidate(t, memC, "former2", "c", terms, func(c *leaderelection.Config) {
				c.LeaseDuration, c.RenewDeadline = 8*time.Second, 6*time.Second
			}).Run(ctx)
		})
		time.Sleep(2200 * time.Millisecond)
		require.Equal(t, "c", *getLease(ctx, t, admin.Config(), "kube-system", "former2").Spec.HolderIdentity, "c leads")
		cFails.Store(true) // t=8.2: c's last renew was at 8.0; its term ends at 14.0
		deleteLease(ctx, t, admin, "former2")
		t.Logf("b Runs again at %v", (<-rerunAt).Format("05.000"))

		time.Sleep(30 * time.Second)
		cancel()
		wg.Wait()
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "b's term, c's, and b's again")
		requireDisjoint(t, got)
	})
}

// A leader with ReleaseOnCancel sees its Lease deleted (its creates are
// refused) and its term ends at its renew deadline. Meanwhile c, which
// never saw the Lease, creates it and leads. b's release is answered 409
// Conflict: someone wrote the Lease since b saw it absent. release reads
// it and finds it deleted again (and c cut off). The 409 is a sight of
// the Lease held, as lookAfterAlreadyExists takes an AlreadyExists: b,
// Run again at once, waits afresh, and the terms do not overlap.
// (Before, nothing of that sight was recorded, and b took its first
// sight of the absence, from before c's term, as waited out.)
func TestAFormerLeaderWhoseReleaseMeetsALeasePutBackAndDeletedAgainWaitsAfresh(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		admin := fakeapiserver.ServeInMemory(srv)
		defer admin.Close()
		var bPostFails, cFails, armed, first atomic.Bool
		var conflicts atomic.Int64
		memB := fakeapiserver.ServeInMemory(fakeapiserver.WithFaults(srv, func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodGet && armed.CompareAndSwap(true, false) {
				// Between release's 409 and its read: c is cut off and
				// someone deletes the Lease again.
				cFails.Store(true)
				bPostFails.Store(false)
				client := must(leaderelection.NewClient(admin.Config()))
				require.NoError(t, client.Delete().Namespace("kube-system").Resource("leases").Name("relput").
					Body(&metav1.DeleteOptions{}).Do(context.Background()).Error())
				conflicts.Add(1)
			}
			if bPostFails.Load() && r.Method == http.MethodPost {
				return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
			}
			return fakeapiserver.Fault{}
		}))
		defer memB.Close()
		memC := faultySide(srv, &cFails, fakeapiserver.Fault{Status: http.StatusServiceUnavailable})
		defer memC.Close()
		terms := make(chan span, 8)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		b := bubbleCandidate(t, memB, "relput", "b", terms, func(c *leaderelection.Config) {
			c.ReleaseOnCancel = true
			lead := c.Callbacks.OnStartedLeading
			c.Callbacks.OnStartedLeading = func(lctx context.Context) {
				done := make(chan struct{})
				go func() {
					defer close(done)
					<-lctx.Done()
					if first.CompareAndSwap(false, true) {
						// b's term is over: c, which never saw the Lease,
						// creates it at once and leads.
						wg.Go(func() { _ = bubbleCandidate(t, memC, "relput", "c", terms).Run(ctx) })
						time.Sleep(100 * time.Millisecond)
						armed.Store(true)
					}
				}()
				lead(lctx)
				<-done
			}
		})
		wg.Go(func() {
			_ = b.Run(ctx) // t=0: b creates the Lease and leads
			_ = b.Run(ctx) // at once again
		})
		time.Sleep(1200 * time.Millisecond)
		bPostFails.Store(true) // t=1.2: b cannot put the Lease back; it sees it absent from 1.5
		deleteLease(ctx, t, admin, "relput")

		time.Sleep(30 * time.Second)
		cancel()
		wg.Wait()
		require.EqualValues(t, 1, conflicts.Load(), "b's release read the Lease after a 409")
		got := collect(terms)
		require.GreaterOrEqual(t, len(got), 2, "b's term, c's, and b's again")
		requireDisjoint(t, got)
	})
}
