package sharding_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// Under RBAC, a sharder bound to exactly SharderRules and members bound
// to exactly MemberRules (plus what the test's controller itself needs:
// list and watch for its informer, create for the children it makes)
// assign, drain, acknowledge, move, collect a left member's Lease, and
// take over a cut-off member's Lease stripped of its labels (a read by
// name), and the API server refuses none of their requests.
func TestUnderRBACASharderAndItsMembersNeedNoMoreThanTheirRules(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{RBAC: true, Users: []string{"sharder", "member"}})
	ns, admin := cp.Namespace(t), fast(cp.Config())
	resources := []schema.GroupVersionResource{corev1.SchemeGroupVersion.WithResource("configmaps")}
	controller := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch", "create"}}}
	sr, mr := sharding.SharderRules(resources), sharding.MemberRules(resources)
	require.NoError(t, cp.Grant(t.Context(), ns, "sharder", slices.Concat(sr.Leases, sr.Objects)))
	require.NoError(t, cp.Grant(t.Context(), ns, "member", slices.Concat(mr.Leases, mr.Objects, controller)))
	refused := map[string]*atomic.Int32{}
	configAs := func(user string) *rest.Config {
		cfg := must(cp.ConfigAs(user))
		awaitAllowed(t, cfg, ns) // RBAC takes a moment to see a new binding
		refused[user] = &atomic.Int32{}
		return fast(countingForbidden(cfg, refused[user]))
	}
	sharderCfg, memberCfg := configAs("sharder"), configAs("member")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	const parents = 10
	createParents(ctx, t, must(testenv.CoreV1Client(admin)), ns, parents)
	var labels sync.Map
	startSharder(ctx, t, &wg, sharderCfg, ns, &labels)
	rec := newRecords()
	ctxA, stopA := context.WithCancel(ctx)
	defer stopA()
	wg.Go(func() { runReplica(ctxA, t, memberCfg, ns, "a", rec) })
	guard := time.Minute // real time: many times what each step takes
	_, alive := awaitConverged(ctx, t, admin, ns, 1, 2*parents, guard)
	a := alive[0]
	wg.Go(func() { runReplica(ctx, t, memberCfg, ns, "b", rec) })
	_, alive = awaitConverged(ctx, t, admin, ns, 2, 2*parents, guard)
	b := slices.DeleteFunc(alive, func(id string) bool { return id == a })[0]
	require.Positive(t, count(&labels, "drain"), "the join drained objects, and a acknowledged")

	stopA() // a releases its Lease; its objects move to b, and its Lease is collected
	awaitConverged(ctx, t, admin, ns, 1, 2*parents, guard)
	require.Eventually(t, func() bool {
		return !slices.Contains(leaseNames(ctx, t, admin, ns), sharding.LeaseName(ring, a))
	}, guard, 100*time.Millisecond, "the sharder deleted a's Lease")

	// c joins, is cut off, and its Lease loses its labels: the sharder
	// reads it by name and takes it over (TestADeadMembersLeaseStrippedOfItsRingLabelsIsFoundAgainAndItsObjectsMove).
	var cutOff atomic.Bool
	cutOffCfg := rest.CopyConfig(memberCfg)
	counted := memberCfg.WrapTransport
	cutOffCfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = counted(rt)
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if cutOff.Load() {
				return nil, errors.New("cut off")
			}
			return rt.RoundTrip(req)
		})
	}
	wg.Go(func() { runReplica(ctx, t, cutOffCfg, ns, "c", rec) })
	awaitConverged(ctx, t, admin, ns, 2, 2*parents, guard)
	c := slices.DeleteFunc(aliveMembers(ctx, t, admin, ns), func(id string) bool { return id == b })[0]
	cutOff.Store(true)
	require.NoError(t, must(leaderelection.NewClient(admin)).Patch(types.MergePatchType).Namespace(ns).Resource("leases").
		Name(sharding.LeaseName(ring, c)).Body([]byte(`{"metadata":{"labels":null}}`)).Do(ctx).Error())
	owners, _ := awaitConverged(ctx, t, admin, ns, 1, 2*parents, guard)
	for _, owner := range owners {
		require.Equal(t, b, owner, "an object stayed with the cut-off member %s", c)
	}
	for user, n := range refused {
		require.Zero(t, n.Load(), "requests of %s were refused (403)", user)
	}
	requireNoOverlap(t, rec)
}

// awaitAllowed waits until cfg's user may list the namespace's
// ConfigMaps: its binding has reached the API server's authorizer.
func awaitAllowed(t *testing.T, cfg *rest.Config, ns string) {
	t.Helper()
	core := must(testenv.CoreV1Client(cfg))
	require.Eventually(t, func() bool {
		err := core.Get().Namespace(ns).Resource("configmaps").Param("limit", "1").Do(context.Background()).Error()
		return !apierrors.IsForbidden(err)
	}, time.Minute, 50*time.Millisecond, "the binding never took effect")
}

// countingForbidden is cfg, counting in n the answers that are 403.
func countingForbidden(cfg *rest.Config, n *atomic.Int32) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				n.Add(1)
			}
			return resp, err
		})
	}
	return cfg
}
