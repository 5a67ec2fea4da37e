package sharding_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
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
		scene := newTakeoverScene()
		var mu sync.Mutex
		var pending chan struct{} // a takeover waiting for a poll's snapshot
		tookOver := make(chan struct{})
		var once sync.Once
		var heldBack atomic.Bool
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, answered := scene.fromX(w, r) // once cut, x's renews and release fail
			if answered {
				return
			}
			if id := scene.x(); !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+sharding.LeaseName(ring, id)) {
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
				once.Do(func() { scene.afterTakeover.Store(true); close(tookOver) })
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
					answerLate(w, rec)
					return
				}
			}
			srv.ServeHTTP(w, r)
		})
		mem := fakeapiserver.ServeInMemory(handler)
		t.Cleanup(mem.Close)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		scene.start(ctx, t, &wg, mem)
		scene.cutX(t, tookOver, 4*leaseDuration) // x stops renewing, and cannot release: the sharder takes its Lease over
		require.True(t, heldBack.Load(), "no poll was answered from before the takeover: the test proves nothing")
		scene.requireNothingTowardX(t, "taken over")
	})
}
