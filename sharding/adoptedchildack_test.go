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
	"k8s.io/apimachinery/pkg/types"

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
		var parentName string
		for i := 0; ; i++ {
			parentName = fmt.Sprintf("parent-%d", i)
			if r.Owner(ns+"/"+parentName) != r.Owner(ns+"/orphan") {
				break
			}
		}
		parent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: parentName, Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(parent).Do(ctx).Into(parent))
		orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(orphan).Do(ctx).Error())

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, c.as("sharder"), ns, "orphan")
		require.Equal(t, "assign", receive(t, labelled, guard).action)
		require.Equal(t, r.Owner(ns+"/orphan"), receive(t, reconciled, guard))
		time.Sleep(time.Second)
		synctest.Wait()

		adopted.Store(true)
		adopt := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`,
			parentName, parent.UID)
		require.NoError(t, c.core.Patch(types.MergePatchType).Namespace(ns).Resource("configmaps").Name("orphan").
			Body([]byte(adopt)).Do(ctx).Error())
		require.Equal(t, r.Owner(ns+"/orphan"), receive(t, reconciled, guard), "its own key's turn after the adoption reconciles it")
		require.Equal(t, "drain", receive(t, labelled, guard).action)

		want := r.Owner(ns + "/" + parentName)
		deadline := time.Now().Add(guard)
		for labelOf(ctx, t, c.core, ns, "orphan") != want {
			require.True(t, time.Now().Before(deadline),
				"the adopted child, drained while its own key was reconciled on %s, never reached its parent's member %s (label %q)",
				r.Owner(ns+"/orphan"), want, labelOf(ctx, t, c.core, ns, "orphan"))
			time.Sleep(100 * time.Millisecond)
		}
	})
}
