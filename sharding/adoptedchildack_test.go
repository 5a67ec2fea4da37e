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

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// A member that keys by ring key reconciles an orphan under its own key.
// Its adoption (an update) enqueues both the old ring key (the orphan's
// own) and the new (its parent's). If the own key's turn begins before
// the sharder's drain reaches the member's cache, and is still running
// when the drain does, the parent key's turn skips the drained child (its
// own key is busy), and the drain's event brings only the parent's key:
// nothing brings the own key back. The drained child must still be let
// go, and reach its parent's member.
func TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var adopted atomic.Bool
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			// The sharder's drain of the adopted child comes a moment
			// after the member's own-key turn has read it.
			if r.UserAgent() == "sharder" && r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/orphan") && adopted.Load() {
				return fakeapiserver.Fault{Latency: time.Second}
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		reconciled := make(chan string, 64)
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, cfg, ns, shard, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				if key.Name != "orphan" {
					return workqueue.Result{}, nil
				}
				reconciled <- shard.Member
				if adopted.Load() {
					time.Sleep(3 * time.Second) // a slow reconcile, in flight as the drain arrives
				}
				return workqueue.Result{}, nil
			})
		})
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		parent := c.createConfigMap(ctx, t, nameOff(r, ns, "parent", r.Owner(ns+"/orphan")), "", nil)
		c.createConfigMap(ctx, t, "orphan", "", nil)

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, c.as("sharder"), ns, "orphan")
		require.Equal(t, "assign", receive(t, labelled, guard).action)
		require.Equal(t, r.Owner(ns+"/orphan"), receive(t, reconciled, guard))
		time.Sleep(time.Second)
		synctest.Wait()

		adopted.Store(true)
		c.adopt(ctx, t, parent, "orphan")
		require.Equal(t, r.Owner(ns+"/orphan"), receive(t, reconciled, guard), "its own key's turn after the adoption reconciles it")
		require.Equal(t, "drain", receive(t, labelled, guard).action)

		want := r.Owner(ns + "/" + parent.Name)
		c.awaitLabel(ctx, t, "orphan", want,
			"the adopted child, drained while its own key was reconciled on %s, never reached its parent's member %s", r.Owner(ns+"/orphan"), want)
	})
}
