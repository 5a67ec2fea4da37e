package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
)

// A label PATCH that lands but whose answer is lost (the connection cut
// after the server acted) is not told to OnLabel: the sharder sees an
// error, retries the key, finds the label already there and has nothing
// to write. SharderConfig.OnLabel once said it was told of "every label
// PATCH that succeeded"; it is told of every one answered success.
func TestALabelPatchWhoseAnswerWasLostIsNotToldToOnLabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const name = "order-lost-answer"
		var cut atomic.Bool
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/"+name) && cut.CompareAndSwap(false, true) {
				return fakeapiserver.Fault{AnswerLost: true}
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		startMembers(ctx, t, &wg, cfg, ns, []string{"a"}, nil)
		createOne(ctx, t, core, ns, name)
		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels)

		deadline := time.Now().Add(time.Minute) // simulated: many times what this takes
		for labelOf(ctx, t, core, ns, name) == "" {
			require.True(t, time.Now().Before(deadline), "the object was never labelled")
			time.Sleep(retryPeriod)
		}
		time.Sleep(leaseDuration) // the retries of the key, and anything else, settle
		synctest.Wait()
		require.True(t, cut.Load(), "no label PATCH lost its answer: the test proves nothing")
		require.Zero(t, count(&labels, "assign"),
			"the object is labelled on the server; OnLabel was told of %d assigns", count(&labels, "assign"))
	})
}
