package sharding_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/internal/testlog"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/testenv"
)

// The elected sharder may not list one of its resources (a 403 here, as
// RBAC answers before a Role allows it; a CRD not yet installed is
// alike). Its sync fails after SyncTimeout; it says so in its log and
// its metric, stops what it started, and tries again with a fresh
// factory, more than once, within its term. Once allowed, it shards.
func TestAnElectedSharderRetriesASyncThatFailedAndShardsOnceItCan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var granted atomic.Bool // the sharder may use Secrets
		secrets := func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/secrets") }
		c := newFakeCluster(t, forbidUntilGranted("sharder", secrets, &granted))
		ns, admin, user := c.ns, c.cfg, c.as("sharder")
		ctx, cancel := context.WithCancel(t.Context())
		const parents = 10
		createParents(ctx, t, c.core, ns, parents)

		memory := metrics.NewMemory()
		reg := must(metrics.NewRegistry(memory))
		logs := &testlog.Buffer{}
		var labels sync.Map
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		startSharder(ctx, t, &wg, user, ns, &labels, func(sc *sharding.SharderConfig) {
			sc.Resources = append(sc.Resources, corev1.SchemeGroupVersion.WithResource("secrets")) // forbidden
			sc.SyncTimeout, sc.MaxSyncBackoff = 5*time.Second, time.Second                         // simulated: a LIST takes none of it
			sc.Metrics = reg
			sc.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		})
		wg.Go(func() { runReplica(ctx, t, admin, ns, "a", newRecords()) })

		failures := func() float64 {
			v, _ := memory.Value("listwatch_sharder_sync_failures_total", ring)
			return v
		}
		guard := time.Minute // simulated: many times what this takes
		require.Eventually(t, func() bool { return failures() >= 2 }, guard, 100*time.Millisecond,
			"the sync failed and was tried again; log:\n%s", logs)
		require.Contains(t, logs.String(), "injected fault: 403", "the log names the cause")
		require.Zero(t, count(&labels, "assign"), "nothing was assigned while a resource could not sync")

		granted.Store(true)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the sharder's log:\n%s", logs)
			}
		})
		awaitConverged(ctx, t, admin, ns, 1, 2*parents, guard) // the replica makes a child for each parent
		t.Logf("sharded after %v failed syncs", failures())
	})
}

// sharderUnderRBAC starts a control plane of the test's own, with RBAC
// on, and a namespace where the user "sharder" may do anything with
// Leases and the given verbs with ConfigMaps. It returns the namespace,
// the admin's config and the sharder's, both with fast client limits.
func sharderUnderRBAC(t *testing.T, configMapVerbs ...string) (cp *testenv.ControlPlane, ns string, admin, user *rest.Config) {
	cp = testenv.Private(t, testenv.Options{RBAC: true, Users: []string{"sharder"}})
	ns = cp.Namespace(t)
	admin = fast(cp.Config())
	user = fast(must(cp.ConfigAs("sharder")))
	grant(t, admin, ns, "leases-and-configmaps", []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: configMapVerbs},
	})
	return cp, ns, admin, user
}

// grant creates a Role named name with rules and binds it to the user
// "sharder", as the admin.
func grant(t *testing.T, admin *rest.Config, ns, name string, rules []rbacv1.PolicyRule) {
	t.Helper()
	scheme := runtime.NewScheme()
	require.NoError(t, rbacv1.AddToScheme(scheme))
	cfg := rest.CopyConfig(admin)
	cfg.APIPath = "/apis"
	cfg.GroupVersion = &rbacv1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client := must(rest.RESTClientFor(cfg))
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	require.NoError(t, client.Post().Namespace(ns).Resource("roles").Body(role).Do(t.Context()).Error())
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: "sharder"}},
	}
	require.NoError(t, client.Post().Namespace(ns).Resource("rolebindings").Body(binding).Do(t.Context()).Error())
}
