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
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// A member that keys by object (EnqueueKey) reconciles a child of a
// sharded parent under the child's own key. The parent's drain is
// acknowledged under the parent's key once no child is busy (childBusy),
// but a turn of the child's own key may begin right after that look, while
// the acknowledgement is on its way: the child carries no drain label of
// its own, so that turn reconciles it. The sharder then moves the child
// straight on with its parent (its member is the one that let the parent
// go). No two members may reconcile the child at once.
func TestAChildKeyedByItsOwnKeyIsNotReconciledByTwoMembersWhenItsParentMoves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var parentName atomic.Value
		parentName.Store("")
		acking := make(chan struct{}, 1)
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			// The member's acknowledgement of the parent's drain takes 2 s.
			if p := parentName.Load().(string); p != "" && r.UserAgent() == "member" && r.Method == http.MethodPatch &&
				strings.HasSuffix(r.URL.Path, "/configmaps/"+p) {
				select {
				case acking <- struct{}{}:
				default:
				}
				return fakeapiserver.Fault{Latency: 300 * time.Millisecond}
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		childReconciles := watchOverlapsOf("child", 5*time.Second)
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, c.as("member"), ns, shard, labels.Everything(), childReconciles.of(shard.Member))
		})
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		a, b := members[0], members[1]
		name := nameOn(r, ns, "parent", b)

		// Parent and child on a (an earlier ring's choice), before any sharder runs.
		parent := c.createConfigMap(ctx, t, name, a, nil)
		c.createConfigMap(ctx, t, "child", a, parent)
		require.Equal(t, a, receive(t, childReconciles.reconciled, guard))
		time.Sleep(time.Second)
		synctest.Wait()
		childReconciles.slow.Store(true)
		parentName.Store(name)

		var counts sync.Map
		startSharder(ctx, t, &wg, c.as("sharder"), ns, &counts)

		// a acknowledges the parent's drain; meanwhile the child changes,
		// and a's turn of its own key begins.
		receive(t, acking, guard)
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("child").
			Body([]byte(`{"metadata":{"annotations":{"touched":"yes"}}}`)).Do(ctx).Error())
		require.Equal(t, a, receive(t, childReconciles.reconciled, guard), "a reconciles the child's change")

		for m := receive(t, childReconciles.reconciled, guard); m != b; m = receive(t, childReconciles.reconciled, guard) {
		}
		time.Sleep(10 * time.Second)
		childReconciles.requireNone(t)
	})
}
