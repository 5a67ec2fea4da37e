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

	"github.com/listwatch/informer/fakeapiserver"
	"github.com/listwatch/informer/sharding"
)

// A parent's old member let it go (acknowledged its drain) and the
// sharder is about to give it to its next member. An orphan on that same
// old member, which reconciles it under its own key right now (a member
// that keys by ring key), is adopted by the parent in that window. The
// sharder moves children straight on from the member that let the parent
// go, as if that member held them under the parent's key; this one it
// holds under its own key, and is reconciling. It must not reach the
// parent's next member before that reconcile has ended.
func TestAChildAdoptedAfterItsParentWasLetGoDoesNotReachTheNextMemberMidReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var parentName atomic.Value
		parentName.Store("")
		var acked atomic.Bool
		ackSeen := make(chan struct{}, 1)
		c := newFakeCluster(t, func(r *http.Request) fakeapiserver.Fault {
			p := parentName.Load().(string)
			if p == "" || !strings.HasSuffix(r.URL.Path, "/configmaps/"+p) {
				return fakeapiserver.Fault{}
			}
			if r.UserAgent() == "member" && r.Method == http.MethodPatch {
				acked.Store(true)
				select {
				case ackSeen <- struct{}{}:
				default:
				}
			}
			if r.UserAgent() == "sharder" && r.Method == http.MethodGet && acked.Load() {
				return fakeapiserver.Fault{Latency: 500 * time.Millisecond} // the sharder's fresh read before moving the children
			}
			return fakeapiserver.Fault{}
		})
		ns, cfg := c.ns, c.cfg
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()

		held := holdFirstReconcileOf("orphan")
		members := startMembers(ctx, t, &wg, cfg, ns, []string{"a", "b"}, func(ctx context.Context, shard sharding.Shard) {
			runRingKeyReconcilerWith(ctx, t, c.as("member"), ns, shard, held.of(shard.Member))
		})
		guard := time.Minute

		r := must(sharding.NewRing(members, 0))
		a := r.Owner(ns + "/orphan")
		name := nameOff(r, ns, "parent", a)
		b := r.Owner(ns + "/" + name)

		// The parent (by an earlier ring) with a child, and the orphan, on a.
		parent := c.createConfigMap(ctx, t, name, a, nil)
		c.createConfigMap(ctx, t, "kid", a, parent)
		c.createConfigMap(ctx, t, "orphan", a, nil)
		first := receive(t, held.began, guard)
		require.Equal(t, a, first.member, "a reconciles the orphan under its own key")
		parentName.Store(name)

		labelled := startSharderReportingLabelsOf(ctx, t, &wg, c.as("sharder"), ns, "orphan")

		// a lets the parent go; the parent adopts the orphan meanwhile.
		receive(t, ackSeen, guard)
		c.adopt(ctx, t, parent, "orphan")

		var moved labelReport
		select {
		case moved = <-labelled:
			t.Logf("first label of the orphan: %+v", moved)
		case <-time.After(30 * time.Second):
		}
		require.False(t, moved.member == b && moved.action != "drain", // a drain leaves it with a
			"the adopted child was %q to %s at %v while a's reconcile of its own key, begun at %v, still ran", moved.action, moved.member, moved.at, first.at)
		held.release()
		receive(t, held.ended, guard)
	})
}
