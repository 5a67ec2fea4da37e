package sharding_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// A sharder polls the shard Leases on one goroutine and takes Leases over
// on another. A poll that the server answered just before a takeover
// landed, and whose answer arrives just after the takeover's, must not be
// recorded over it: the member taken over, dead for certain, would be
// alive again for a lease, put back on the ring, and objects drained
// toward it. Here the server holds one poll's answer back (within the
// poll's timeout) until the takeover has been answered. Nothing may be
// labelled or drained toward a member whose Lease was taken over. Found
// by the review.
func TestAPollAnsweredBeforeATakeoverDoesNotBringTheMemberBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		srv := fakeapiserver.New()
		var xCut atomic.Bool
		var xID atomic.Value
		xID.Store("")
		var mu sync.Mutex
		var pending chan struct{} // a takeover waiting for a poll's snapshot
		tookOver := make(chan struct{})
		var once sync.Once
		var afterTakeover, heldBack atomic.Bool
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x := r.UserAgent() == "member-x"
			if x && xCut.Load() {
				http.Error(w, "cut", http.StatusServiceUnavailable) // x's renews and release fail
				return
			}
			id := xID.Load().(string)
			if !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+sharding.LeaseName(ring, id)) {
				// The takeover: wait (within its timeout) for the sharder's
				// next poll to be answered from the state before it.
				ch := make(chan struct{})
				mu.Lock()
				pending = ch
				mu.Unlock()
				select {
				case <-ch:
				case <-time.After(1200 * time.Millisecond):
				}
				srv.ServeHTTP(w, r)
				once.Do(func() { afterTakeover.Store(true); close(tookOver) })
				return
			}
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/leases") && r.URL.Query().Get("labelSelector") != "" {
				mu.Lock()
				ch := pending
				pending = nil
				mu.Unlock()
				if ch != nil {
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, r) // the Leases before the takeover
					heldBack.Store(true)
					close(ch)
					<-tookOver
					time.Sleep(10 * time.Millisecond) // the takeover's answer arrives first
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.WriteHeader(rec.Code)
					_, _ = w.Write(rec.Body.Bytes())
					return
				}
			}
			srv.ServeHTTP(w, r)
		})
		net := fakeapiserver.ServeInMemory(handler)
		t.Cleanup(net.Close)
		admin := must(testenv.CoreV1Client(net.Config()))
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		var bad []string
		var badMu sync.Mutex
		sharder := must(sharding.NewSharder(sharding.SharderConfig{Config: net.Config(), LeaseClient: must(leaderelection.NewClient(net.Config())),
			LeaseNamespace: "default", Ring: ring, Identity: "sharder",
			Resources: []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}, Namespace: "default",
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet,
			OnLabel: func(action string, key informer.Key, member string) {
				if afterTakeover.Load() && member != "" && member == xID.Load().(string) {
					badMu.Lock()
					bad = append(bad, fmt.Sprintf("%s %s toward %s", action, key.Name, member))
					badMu.Unlock()
				}
			}}))
		wg.Go(func() { _ = sharder.Run(ctx) })
		member := func(name string, cfg func() *rest.Config, ids chan<- string) {
			m := must(sharding.NewMember(sharding.MemberConfig{Client: must(leaderelection.NewClient(cfg())), Namespace: "default", Ring: ring, Name: name,
				LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: quiet,
				Run: func(ctx context.Context, s sharding.Shard) {
					select {
					case ids <- s.Member:
					default:
					}
					<-ctx.Done()
				}}))
			wg.Go(func() { _ = m.Run(ctx) })
		}
		ids := make(chan string, 2)
		member("m1", net.Config, ids)
		xIDs := make(chan string, 1)
		member("x", func() *rest.Config { c := net.Config(); c.UserAgent = "member-x"; return c }, xIDs)
		<-ids
		xID.Store(<-xIDs)
		for i := range 20 {
			require.NoError(t, admin.Post().Namespace("default").Resource("configmaps").
				Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%02d", i)}}).Do(ctx).Error())
		}
		time.Sleep(4 * leaseDuration) // the sharder is elected and assigns every object to m1 or x

		xCut.Store(true) // x stops renewing, and cannot release: the sharder takes its Lease over
		select {
		case <-tookOver:
		case <-time.After(4 * leaseDuration):
			t.Fatal("no takeover of x's Lease")
		}
		time.Sleep(4 * leaseDuration)
		badMu.Lock()
		defer badMu.Unlock()
		require.True(t, heldBack.Load(), "no poll was answered from before the takeover: the test proves nothing")
		require.Empty(t, bad, "objects were labelled or drained toward x after its Lease was taken over")
	})
}
