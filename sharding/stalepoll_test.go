package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
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
		var held heldPoll
		tookOver := make(chan struct{})
		var once sync.Once
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x, answered := scene.fromX(w, r) // once cut, x's renews and release fail
			if answered {
				return
			}
			if id := scene.x(); !x && id != "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+sharding.LeaseName(ring, id)) {
				held.write(w, r, srv) // the takeover, once the next poll has read the Leases before it
				once.Do(func() { scene.afterTakeover.Store(true); close(tookOver) })
				return
			}
			if held.poll(w, r, srv, func() {
				<-tookOver
				time.Sleep(10 * time.Millisecond) // the takeover's answer arrives first
			}) {
				return
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
		require.True(t, held.heldBack.Load(), "no poll was answered from before the takeover: the test proves nothing")
		scene.requireNothingTowardX(t, "taken over")
	})
}
