package leaderelection_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/testenv"
	"github.com/listwatch/informer/testenv/faultproxy"
)

// The leader is cut off (its renews hang) and someone deletes its Lease.
// Its term runs on until its renew deadline whatever happened to the
// Lease, so a standby that saw the Lease held must treat its absence like
// an unchanged Lease and wait LeaseDuration from when it last saw it
// change: it leads only after the old term ended. (A leader that can
// still renew puts a deleted Lease back on its next renew: the API server
// creates a Lease on update.)
func TestAStandbyWaitsOutALeaseDeletedUnderItsLeader(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	proxy := must(faultproxy.Start(cp.Addr()))
	defer proxy.Close()
	ts := newTerms()
	guard := takeoverBound + time.Minute // against hanging, not a timing
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	cfgA, _ := config(t, cp.ConfigVia(proxy.Addr()), ns, "deleted", "cut-off", ts.callbacks("cut-off", nil))
	wg.Go(func() { must(leaderelection.New(cfgA)).Run(ctx) })
	awaitTerm(t, ts, guard, "the candidate behind the proxy leads")

	sawA := make(chan struct{})
	var once sync.Once
	cfgB, _ := config(t, cp.Config(), ns, "deleted", "standby", ts.callbacks("standby", func(id string) {
		if id == "cut-off" {
			once.Do(func() { close(sawA) })
		}
	}))
	wg.Go(func() { must(leaderelection.New(cfgB)).Run(ctx) })
	<-sawA

	proxy.Blackhole()
	require.NoError(t, must(leaderelection.NewClient(cp.Config())).Delete().Namespace(ns).Resource("leases").Name("deleted").
		Body(&metav1.DeleteOptions{}).Do(ctx).Error())
	deletedAt := time.Now()
	b := awaitTerm(t, ts, guard, "the standby leads")
	require.Equal(t, "standby", b.id)
	t.Logf("the standby led %v after the delete (lease %v)", b.start.Sub(deletedAt).Round(time.Millisecond), leaseDuration)

	require.Eventually(t, func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return len(ts.all) > 0
	}, guard, 10*time.Millisecond, "the cut-off leader's term ends")
	ts.mu.Lock()
	a := ts.all[0]
	ts.mu.Unlock()
	require.True(t, b.start.After(a.end), "the standby led at %v, while the cut-off leader's term ran until %v", b.start, a.end)
}
