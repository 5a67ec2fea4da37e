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

// The leader is cut off (its renews hang) and someone deletes its Lease.
// Its term runs on until its renew deadline whatever happened to the
// Lease, so a standby that saw the Lease held must treat its absence like
// an unchanged Lease and wait LeaseDuration from when it first saw it
// gone (docs/14, "A deleted Lease"): it leads only after the old term
// ended. (A leader that can
// still renew puts a deleted Lease back on its next renew: its update,
// which carries the old UID, is answered 409, and the renew's read finds
// the Lease gone and creates it.) On the fake API server, in a synctest
// bubble.
func TestAStandbyWaitsOutALeaseDeletedUnderItsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := fakeapiserver.New()
		var cutOff atomic.Bool
		memA := faultySide(srv, &cutOff, fakeapiserver.Fault{Hang: true}) // until AttemptTimeout
		defer memA.Close()
		admin := inMemory(t, srv)
		ts := newTerms()
		guard := takeoverBound + time.Minute // against hanging, not a timing
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		cfgA, _ := config(t, memA.Config(), "kube-system", "deleted", "cut-off", ts.callbacks("cut-off", nil))
		wg.Go(func() { must(leaderelection.New(cfgA)).Run(ctx) })
		awaitTerm(t, ts, guard, "the candidate to be cut off leads")

		sawA := make(chan struct{})
		var once sync.Once
		cfgB, _ := config(t, admin.Config(), "kube-system", "deleted", "standby", ts.callbacks("standby", func(id string) {
			if id == "cut-off" {
				once.Do(func() { close(sawA) })
			}
		}))
		wg.Go(func() { must(leaderelection.New(cfgB)).Run(ctx) })
		<-sawA

		cutOff.Store(true)
		deleteLease(ctx, t, admin, "deleted")
		deletedAt := time.Now()
		b := awaitTerm(t, ts, guard, "the standby leads")
		require.Equal(t, "standby", b.id)
		t.Logf("the standby led %v after the delete (lease %v)", b.start.Sub(deletedAt), leaseDuration)

		require.Eventually(t, func() bool {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			return len(ts.all) > 0
		}, guard, 10*time.Millisecond, "the cut-off leader's term ends")
		ts.mu.Lock()
		a := ts.all[0]
		ts.mu.Unlock()
		require.True(t, b.start.After(a.end), "the standby led at %v, while the cut-off leader's term ran until %v", b.start, a.end)
	})
}
