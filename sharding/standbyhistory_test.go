package sharding_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A standby sharder polls the member Leases for as long as it stands by,
// and members come and go under it: each term a new id, whose Lease the
// leader collects once it owns nothing. A standby that kept every id it
// ever saw would grow with the churn for the life of its process, and,
// once elected, would judge each one absent and create its Lease to take
// it over, only to delete it again: a burst of writes for members gone
// long ago, each also counted as a takeover. A standby keeps what the
// Leases say now, as a sharder started at that moment would. Here three
// members' Leases come and go while the sharder stands by; once it is
// elected, no member Lease may be created.
func TestAStandbyElectedCreatesNoLeaseForMembersThatLeftWhileItStoodBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := fakeapiserver.New()
		var created atomic.Int64 // member Leases created by anyone but this test
		var byTest atomic.Bool
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/leases") && !byTest.Load() {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if bytes.Contains(body, []byte(sharding.LeaseName(ring, "gone"))) {
					created.Add(1)
				}
			}
			srv.ServeHTTP(w, r)
		})
		mem := fakeapiserver.ServeInMemory(handler)
		t.Cleanup(mem.Close)
		cfg := fast(mem.Config())
		leases := must(leaderelection.NewClient(cfg))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		post := func(name string, holder string, seconds int32, labels map[string]string) {
			byTest.Store(true)
			defer byTest.Store(false)
			now := metav1.NewMicroTime(time.Now())
			require.NoError(t, leases.Post().Namespace("default").Resource("leases").Body(&coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
				Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &now},
			}).Do(ctx).Error())
		}
		remove := func(name string) {
			require.NoError(t, leases.Delete().Namespace("default").Resource("leases").Name(name).Do(ctx).Error())
		}
		// Another sharder holds the ring's election, and renews no more:
		// the sharder is elected half a minute after it first saw it.
		post("sharder-"+ring, "another-sharder", 30, nil)
		startSharder(ctx, t, &wg, cfg, "default", &sync.Map{})

		for i := range 3 {
			id := fmt.Sprintf("gone%d", i)
			post(sharding.LeaseName(ring, id), id, int32(leaseDuration/time.Second),
				map[string]string{sharding.LeaseRingLabel: ring, sharding.LeaseMemberLabel: id})
			time.Sleep(4 * retryPeriod) // polled alive
			remove(sharding.LeaseName(ring, id))
			time.Sleep(4 * retryPeriod) // polled absent
		}
		time.Sleep(30*time.Second + 4*leaseDuration) // elected, and sharding

		var elected coordinationv1.Lease
		require.NoError(t, leases.Get().Namespace("default").Resource("leases").Name("sharder-"+ring).Do(ctx).Into(&elected))
		require.NotEqual(t, "another-sharder", *elected.Spec.HolderIdentity, "the sharder was never elected: the test proves nothing")
		require.Zero(t, created.Load(), "the elected sharder created the Leases of members that had left")
	})
}
