package sharding_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
)

// A takeover answered 503 (no Retry-After) without landing; its
// read-back finds the version judged; then the server applies the write
// it held (the late landing, sent here by the test as the server would
// apply it). The takeover may be sent again only a request timeout
// (1.5 s) after the failure, while a poll is sent at least every 2.2
// RetryPeriods (1.1 s; with the defaults, 4.4 s against a 5 s timeout):
// a poll lists the Lease taken over first, the member is dead for
// certain, and the takeover is never sent again, counted under neither
// result. (A review found the docs saying it counted as alive.)
func TestATakeoverThatLandsAfterItsReadBackIsFoundByAPollAndCountedUnderNeitherResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const id = "landslate"
		name := sharding.LeaseName(ring, id)
		var mu sync.Mutex
		var puts int
		var held []byte // the first takeover's body, applied late
		landed := make(chan struct{})
		var c *fakeCluster
		c = newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "late" {
				return fakeapiserver.Fault{}
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/"+name):
				puts++
				if puts == 1 {
					held, _ = io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(held))
					return fakeapiserver.Fault{Status: http.StatusServiceUnavailable}
				}
			case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+name) && held != nil:
				body := held
				held = nil
				time.AfterFunc(50*time.Millisecond, func() { // after the read-back is answered
					late := must(leaderelection.NewClient(c.as("late")))
					_ = late.Put().Namespace(c.ns).Resource("leases").Name(name).Body(body).Do(context.Background()).Error()
					close(landed)
				})
			}
			return fakeapiserver.Fault{}
		})
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		leases := must(leaderelection.NewClient(c.cfg))
		createMemberLease(ctx, t, leases, c.ns, id) // held by id for 1 s, never renewed
		createOwnedBy(ctx, t, c.cfg, c.ns, id)
		memory := metrics.NewMemory()
		startSharder(ctx, t, &wg, c.cfg, c.ns, &sync.Map{}, func(sc *sharding.SharderConfig) {
			sc.Metrics = must(metrics.NewRegistry(memory))
		})
		select {
		case <-landed:
		case <-time.After(6 * leaseDuration):
			t.Fatal("the takeover never failed and landed late: the test proves nothing")
		}
		time.Sleep(2 * leaseDuration)

		var lease coordinationv1.Lease
		require.NoError(t, leases.Get().Namespace(c.ns).Resource("leases").Name(name).Do(ctx).Into(&lease))
		require.NotEqual(t, id, *lease.Spec.HolderIdentity, "the late write did not land: the test proves nothing")
		mu.Lock()
		sent := puts
		mu.Unlock()
		taken, _ := memory.Value("listwatch_sharder_takeovers_total", ring, "taken")
		alive, _ := memory.Value("listwatch_sharder_takeovers_total", ring, "alive")
		require.Equal(t, []float64{0, 0}, []float64{taken, alive},
			"a takeover that landed after its read-back counted %v taken, %v alive (sent %d times): a poll finds it first", taken, alive, sent)
		require.Equal(t, 1, sent, "the takeover was sent again after a poll found it landed")
	})
}
