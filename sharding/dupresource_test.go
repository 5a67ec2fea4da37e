package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// A resource listed twice in SharderConfig.Resources is valid to
// NewSharder, which checks the list only for being empty. The sharder
// then asked its factory for the same informer twice, with the same
// index, which the factory refuses: every sync attempt failed, and
// nothing was ever labelled, term after term. NewSharder must refuse
// such a config, or the sharder shard it as the one resource it names.
//
// Passing: NewSharder refuses it, or the objects are assigned.
func TestAResourceListedTwiceIsRefusedOrSharded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 5
		createParents(ctx, t, c.core, ns, parents)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		resources := []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}
		resources = append(resources, resources[0])
		_, err := sharding.NewSharder(sharding.SharderConfig{Config: cfg, LeaseClient: must(leaderelection.NewClient(cfg)),
			LeaseNamespace: ns, Ring: ring, Resources: resources, Namespace: ns})
		if err != nil {
			t.Logf("refused: %v", err)
			return
		}
		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels, func(s *sharding.SharderConfig) { s.Resources = resources })
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", newRecords()) })
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, time.Minute) // simulated
	})
}
