package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An object whose controller owner is itself, or two objects each the
// controller of the other, are valid to the API server (it checks an
// owner reference's fields, not the graph). Followed as children, each
// would wait for a parent that is itself or waits for it (decideChild),
// and none would ever be labelled, though SharderConfig.Resources
// promises every object a label. Each is decided by the ring instead, as
// a parent. Found by the review.
func TestObjectsInAnOwnershipCycleAreAssignedByTheRing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		startMembers(ctx, t, &wg, cfg, ns, []string{"a"}, nil)
		kind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
		create := func(name string) *corev1.ConfigMap {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
			require.NoError(t, c.core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Into(cm))
			return cm
		}
		own := func(child, parent *corev1.ConfigMap) {
			child.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(parent, kind)}
			require.NoError(t, c.core.Put().Namespace(ns).Resource("configmaps").Name(child.Name).Body(child).Do(ctx).Into(child))
		}
		self := create("self")
		own(self, self)
		p, q := create("p"), create("q")
		own(q, p)
		own(p, q)
		create("witness")

		var counts sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &counts)
		time.Sleep(10 * leaseDuration) // simulated
		require.NotEmpty(t, labelOf(ctx, t, c.core, ns, "witness"), "the sharder is at work")
		var unlabelled []string
		for _, name := range []string{"self", "p", "q"} {
			if labelOf(ctx, t, c.core, ns, name) == "" {
				unlabelled = append(unlabelled, name)
			}
		}
		require.Empty(t, unlabelled, "still unlabelled after %v", 10*leaseDuration)
	})
}
