package sharding_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/sharding"
)

// twoMembers is the scene of the tests of what happens to a member's
// Lease: parents ConfigMaps in the cluster's namespace, a sharder, member
// a (reaching the cluster through aCfg) and then member b, each join
// converged (every parent and child with its owner). The tests then
// change a's Lease, or cut a off, and judge what the sharder does.
type twoMembers struct {
	ctx    context.Context // ends with stop
	labels *sync.Map       // the sharder's label writes, counted by action
	rec    *records        // both members' reconciles
	a      string          // a's member id
	stopA  func()          // ends a's replica: it releases its Lease
	stop   func()          // ends everything and waits for it; also run at cleanup
}

func joinTwo(t *testing.T, c *fakeCluster, aCfg *rest.Config, parents int, tweaks ...func(*sharding.SharderConfig)) *twoMembers {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ctxA, stopA := context.WithCancel(ctx)
	s := &twoMembers{ctx: ctx, labels: &sync.Map{}, rec: newRecords(), stopA: stopA}
	var wg sync.WaitGroup
	var once sync.Once
	s.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(s.stop)
	createParents(ctx, t, c.core, c.ns, parents)
	startSharder(ctx, t, &wg, c.cfg, c.ns, s.labels, tweaks...)
	wg.Go(func() { runReplica(ctxA, t, aCfg, c.ns, "a", s.rec) })
	_, alive := awaitConverged(ctx, t, c.cfg, c.ns, 1, 2*parents, time.Minute)
	s.a = alive[0]
	wg.Go(func() { runReplica(ctx, t, c.cfg, c.ns, "b", s.rec) })
	awaitConverged(ctx, t, c.cfg, c.ns, 2, 2*parents, time.Minute)
	return s
}
