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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// The API server checks an owner reference's fields, not the graph: an
// object may name itself as its controller, by its own UID, under
// another name ("ghost"). parentOf finds no "ghost", so the ring decides
// the object; but the controller index, keyed by UID alone, lists it as
// its own child. moveChildren then moves that child's children first,
// which are its own: it calls itself without end, one GET per level,
// until the goroutine's stack overflows and the process dies. Passing
// means the object is assigned with a bounded number of requests.
func TestAnObjectThatControlsItselfUnderAnotherNameIsAssignedWithBoundedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var gets atomic.Int64
		const stop = 50 // past this, the GETs fail, so the recursion unwinds rather than overflow the stack
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "sharder" && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps/loop") {
				if gets.Add(1) > stop {
					return fakeapiserver.Fault{Status: http.StatusInternalServerError}
				}
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "loop", Namespace: ns}}
		require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(obj).Do(ctx).Into(obj))
		isController := true
		obj.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "ghost", UID: obj.UID, Controller: &isController}}
		require.NoError(t, c.core.Put().Namespace(ns).Resource("configmaps").Name("loop").Body(obj).Do(ctx).Into(obj))

		a := startMembers(ctx, t, &wg, cfg, ns, []string{"a"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconciler(ctx, t, cfg, ns, shard)
		})[0]
		var counts sync.Map
		startSharder(ctx, t, &wg, c.as("sharder"), ns, &counts)

		deadline := time.Now().Add(30 * time.Second)
		for labelOf(ctx, t, c.core, ns, "loop") != a && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		require.LessOrEqual(t, gets.Load(), int64(10), "the sharder read the object again and again: its moveChildren recursed into the object itself")
		require.Equal(t, a, labelOf(ctx, t, c.core, ns, "loop"), "the object was never assigned")
	})
}
