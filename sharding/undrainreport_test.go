package sharding_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// OnLabel reports ("undrain", key, "") when a drain is taken back: the
// object stays where it is. A child drained off a (its parent was going
// to b) is taken back when b leaves and the parent comes back to a; it
// never left a, so that is an undrain, not a move.
func TestAChildsDrainTakenBackIsReportedAsAnUndrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			if r.UserAgent() == "member" && r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/configmaps/child") {
				return fakeapiserver.Fault{Hang: true} // a cannot let the child go
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		ctxB, leaveB := context.WithCancel(ctx)

		run := func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconciler(ctx, t, c.as("member"), ns, shard)
		}
		a := startMembers(ctx, t, &wg, cfg, ns, []string{"a"}, run)[0]
		b := startMembers(ctxB, t, &wg, cfg, ns, []string{"b"}, run)[0]
		r := must(sharding.NewRing([]string{a, b}, 0))
		parent := c.createConfigMap(ctx, t, nameOn(r, ns, "parent", b), a, nil)
		c.createConfigMap(ctx, t, "child", a, parent)

		steps := startSharderReportingLabelsOf(ctx, t, &wg, cfg, ns, "child")
		require.Equal(t, labelStep{"drain", b}, receive(t, steps, time.Minute).labelStep, "the child is drained toward its parent's next member")
		leaveB()
		step := receive(t, steps, time.Minute).labelStep
		require.Equal(t, a, labelOf(ctx, t, c.core, ns, "child"), "the child stayed on a")
		require.Equal(t, labelStep{"undrain", ""}, step, "the child's drain was taken back: it never left a")
	})
}
