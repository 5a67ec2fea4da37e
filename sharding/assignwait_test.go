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
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharding"
)

// Objects created while nothing runs stay unlabelled, and so invisible
// to every member, until the sharder has watched the Leases for a
// LeaseDuration: before that it cannot tell a live member from an
// expired one, and it labels nothing. Then it labels them all; and from
// then on, a new object is labelled by one PATCH as soon as the sharder
// sees it.
// createOne creates one unlabelled parent ConfigMap.
func createOne(ctx context.Context, t *testing.T, core *rest.RESTClient, ns, name string) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"role": "parent"}}}
	require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error())
}

func TestASharderLabelsNothingUntilItHasWatchedTheLeasesForALeaseDurationThenEachNewObjectAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg, core := c.ns, c.cfg, c.core
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 10
		createParents(ctx, t, core, ns, parents)

		rec := newRecords()
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		started := time.Now()
		wg.Go(func() { runReplica(ctx, t, cfg, ns, "a", rec) })
		startSharder(ctx, t, &wg, cfg, ns, &labels)

		shard := sharding.Shard{Ring: ring}
		for time.Since(started) < leaseDuration-retryPeriod {
			time.Sleep(retryPeriod / 4)
			synctest.Wait()
			for _, cm := range listConfigMaps(ctx, t, core, ns) {
				require.Empty(t, cm.Labels[shard.Label()], "%s labelled %v after the sharder's start, before it could judge the Leases", cm.Name, time.Since(started))
			}
		}
		require.Zero(t, count(&labels, "assign"))
		awaitConverged(ctx, t, cfg, ns, 1, 2*parents, leaseDuration+5*time.Second) // the member makes a child per parent
		t.Logf("%d parents and their children assigned %v after the sharder's start", parents, time.Since(started))

		// In steady state a new object is labelled by one PATCH as soon as
		// its creation reaches the sharder: no simulated time passes.
		assigned := count(&labels, "assign")
		created := time.Now()
		createOne(ctx, t, core, ns, "order-late")
		synctest.Wait()
		require.Equal(t, time.Duration(0), time.Since(created))
		require.NotEmpty(t, labelOf(ctx, t, core, ns, "order-late"), "a new object is labelled at once")
		require.Equal(t, assigned+1, count(&labels, "assign"), "by one PATCH")
	})
}
