package sharding_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
)

// Two rings share a namespace, and one's name begins with the other's:
// "orders" and "orders-api". The sharder of "orders" finds its members by
// a label naming its ring exactly, so it never takes the Lease of an
// "orders-api" member for a dead member of its own and deletes it: no
// Lease is deleted while the sharder runs for several lease durations,
// and the "orders-api" member keeps its one term.
func TestASharderNeverTouchesTheLeasesOfARingWhoseNameExtendsItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, nil)
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		leases := must(leaderelection.NewClient(cfg))
		events := must(leases.Get().Namespace(ns).Resource("leases").Param("watch", "true").Watch(ctx))
		defer events.Stop()

		// The other ring's member renews every 8 s, so the sharder, polling
		// every 0.5–1.1 s, mostly holds its Lease's current resourceVersion: a
		// delete guarded by it would mostly succeed.
		terms := make(chan string, 8)
		other := must(sharding.NewMember(sharding.MemberConfig{
			Client: leases, Namespace: ns, Ring: ring + "-api", Name: "api",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 8 * time.Second, Logger: testLogger,
			Run: func(ctx context.Context, shard sharding.Shard) { terms <- shard.Member; <-ctx.Done() },
		}))
		wg.Go(func() { other.Run(ctx) })
		member := receive(t, terms, time.Minute)

		var labels sync.Map
		startSharder(ctx, t, &wg, cfg, ns, &labels)
		// The sharder judges after one LeaseDuration and collects dead
		// members' Leases once per LeaseDuration after that: 4 give it three
		// passes. (A sharder that misread the other ring's Lease as its own
		// took that Lease's 15 s as the longest, and judged only after it:
		// this test failed first on it with a 30 s window.)
		window := time.After(4 * leaseDuration)
		renews := 0 // proves the watch works: the member's renews arrive (two or more in the window)
		for done := false; !done; {
			select {
			case e, ok := <-events.ResultChan():
				require.True(t, ok, "the watch of Leases closed")
				require.NotEqual(t, watch.Error, e.Type, "the watch of Leases failed: %v", e.Object)
				if e.Type == watch.Modified {
					renews++
				}
				if e.Type == watch.Deleted {
					obj := e.Object.(metav1.Object)
					t.Fatalf("Lease %s was deleted while its member %s ran", obj.GetName(), member)
				}
			case m := <-terms:
				t.Fatalf("the %s-api member's term ended; it rejoined as %s", ring, m)
			case <-window:
				done = true
			}
		}
		require.Positive(t, renews, "the watch saw the Leases renewed")
		require.Contains(t, leaseNames(ctx, t, cfg, ns), sharding.LeaseName(ring+"-api", member))
	})
}
