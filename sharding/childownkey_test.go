package sharding_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
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

		var mu sync.Mutex
		running := map[string]int{} // member -> child reconciles in flight
		var overlaps []string
		var slow atomic.Bool
		reachedB := make(chan string, 64)
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, c.as("member"), ns, shard, labels.Everything(), func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				if key.Name != "child" {
					return workqueue.Result{}, nil
				}
				mu.Lock()
				for m, n := range running {
					if m != shard.Member && n > 0 {
						overlaps = append(overlaps, fmt.Sprintf("%s began reconciling the child at %v while %s still did", shard.Member, time.Now(), m))
					}
				}
				running[shard.Member]++
				mu.Unlock()
				reachedB <- shard.Member
				if slow.Load() {
					time.Sleep(5 * time.Second)
				}
				mu.Lock()
				running[shard.Member]--
				mu.Unlock()
				return workqueue.Result{}, nil
			})
		})
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		var name string
		for i := 0; ; i++ {
			name = fmt.Sprintf("parent-%d", i)
			if r.Owner(ns+"/"+name) == members[1] {
				break
			}
		}
		a, b := members[0], members[1]
		label := sharding.Shard{Ring: ring}.Label()

		// Parent and child on a (an earlier ring's choice), before any sharder runs.
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{label: a}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		isController := true
		child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: map[string]string{label: a},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: parent.UID, Controller: &isController}}}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(child).Do(ctx).Error())
		require.Equal(t, a, receive(t, reachedB, guard))
		time.Sleep(time.Second)
		synctest.Wait()
		slow.Store(true)
		parentName.Store(name)

		var counts sync.Map
		startSharder(ctx, t, &wg, c.as("sharder"), ns, &counts)

		// a acknowledges the parent's drain; meanwhile the child changes,
		// and a's turn of its own key begins.
		receive(t, acking, guard)
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("child").
			Body([]byte(`{"metadata":{"annotations":{"touched":"yes"}}}`)).Do(ctx).Error())
		require.Equal(t, a, receive(t, reachedB, guard), "a reconciles the child's change")

		for m := receive(t, reachedB, guard); m != b; m = receive(t, reachedB, guard) {
		}
		time.Sleep(10 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, overlaps, "the child was reconciled by two members at once")
	})
}
