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

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// What an object whose controller owner the sharder's cache lacks costs
// (here a Secret, not sharded, in the core group that the sharded
// ConfigMaps share): the sharder asks the API server for the owner, one
// GET per sharded resource of its group, before each PATCH of its own —
// not once per move. A move from a live member, a drain and then an
// assignment, costs two at least, and one more for each PATCH its stale
// cache gets refused (409). (The package doc said "one GET more" for
// "every assignment and every move".) Counted at the fake API server,
// in a synctest bubble.
func TestAnObjectWhoseOwnerTheCacheLacksCostsAGetBeforeEachOfTheShardersPatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ownerGets, sharderPatches atomic.Int64
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			switch {
			case r.UserAgent() != "sharder":
			case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/configmaps/credentials"):
				ownerGets.Add(1)
			case r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/settings"):
				sharderPatches.Add(1)
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runKeyReconciler(ctx, t, cfg, ns, shard, labels.Everything(), func(context.Context, informer.Key) (workqueue.Result, error) {
				return workqueue.Result{}, nil
			})
		})
		guard := time.Minute // simulated: many times what this takes

		_, want := createOffRing(ctx, t, c, members, "5ec7e700-0000-4000-8000-000000000003")
		labelled := startSharderReportingLabelsOf(ctx, t, &wg, c.as("sharder"), ns, "settings")
		require.Equal(t, "drain", receive(t, labelled, guard).action)
		// At least one: a drain its stale cache got refused (409) costs
		// a GET more, and the sharder may be at its next step already.
		require.GreaterOrEqual(t, ownerGets.Load(), int64(1), "the sharder asked for the owner before its drain")
		require.Equal(t, labelStep{"assign", want}, receive(t, labelled, guard).labelStep)
		require.GreaterOrEqual(t, ownerGets.Load(), int64(2), "and again before its assignment: a move from a live member costs two")
		require.Equal(t, sharderPatches.Load(), ownerGets.Load(), "one GET of the owner before each PATCH of the sharder's")
	})
}
