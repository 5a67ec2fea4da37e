package sharedinformer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// fastRetries makes an informer that cannot list retry every second at
// most, so a test sees it recover soon after the cause is gone.
var fastRetries = sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second})

func newFactory(t *testing.T, cfg *rest.Config) *sharedinformer.Factory {
	t.Helper()
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: factoryScheme})
	require.NoError(t, err)
	return f
}

// startFactory starts f until the test ends, then waits for it to stop.
func startFactory(t *testing.T, f *sharedinformer.Factory) {
	ctx, stop := context.WithCancel(context.Background())
	f.Start(ctx)
	t.Cleanup(func() { stop(); f.Wait() })
}

func TestAnInformerIsMadeFromTheTypeAloneWhateverItsPlural(t *testing.T) {
	ctx := t.Context()
	cp := testenv.Shared(t)
	require.NoError(t, cp.InstallCRD(ctx, octopusCRD))
	f := newFactory(t, cp.Config())

	cases := []struct {
		name string
		make func() (string, error)
	}{
		// Built-in types are read as protobuf; a custom resource, as JSON.
		{"configmaps, protobuf", nameOf(sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f))},
		{"endpoints, protobuf", nameOf(sharedinformer.InformerFor[*corev1.Endpoints](ctx, f))},
		{"ingresses.networking.k8s.io, protobuf", nameOf(sharedinformer.InformerFor[*networkingv1.Ingress](ctx, f))},
		{"networkpolicies.networking.k8s.io, protobuf", nameOf(sharedinformer.InformerFor[*networkingv1.NetworkPolicy](ctx, f))},
		{"octopodes.zoo.listwatch.dev", nameOf(sharedinformer.InformerFor[*Octopus](ctx, f))},
	}
	for _, c := range cases {
		name, err := c.make()
		require.NoError(t, err, c.name)
		assert.Equal(t, c.name, name)
	}
}

// deleteCRDAtCleanup deletes crd when the test ends: a CRD outlives the
// test on the shared control plane, and a later test (or this one's next
// run, -count=2) would find its kind in discovery.
func deleteCRDAtCleanup(t *testing.T, cp *testenv.ControlPlane, crd testenv.CRD) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		assert.NoError(t, cp.DeleteCRD(ctx, crd))
	})
}

// nameOf turns InformerFor's answer into its name, for a table.
func nameOf[T interface{ Name() string }](inf T, err error) func() (string, error) {
	return func() (string, error) {
		if err != nil {
			return "", err
		}
		return inf.Name(), nil
	}
}

func TestATypeTheServerDoesNotServeIsAnErrorThatSuggestsTheNearestKind(t *testing.T) {
	cp := testenv.Shared(t)
	require.NoError(t, cp.InstallCRD(t.Context(), octopusCRD))
	_, err := sharedinformer.InformerFor[*Octopuss](t.Context(), newFactory(t, cp.Config()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no resource of kind Octopuss")
	assert.Contains(t, err.Error(), "did you mean Octopus (octopodes in zoo.listwatch.dev/v1)?")
}

// The factory's discovery is cached; a miss refreshes it, so a CRD
// installed after the factory first looked is found. On the shared
// control plane, the Octopus type is registered under a group of this
// run's own (named after its namespace), which nothing has installed yet,
// and deleted when the test ends: a second Octopus left behind would be
// another "did you mean" for the next run (-count=2) of
// TestATypeTheServerDoesNotServeIsAnErrorThatSuggestsTheNearestKind.
func TestACustomResourceInstalledAfterTheFirstLookupIsFound(t *testing.T) {
	cp := testenv.Shared(t)
	gv := schema.GroupVersion{Group: cp.Namespace(t) + ".late.listwatch.dev", Version: "v1"}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(gv, &Octopus{}, &OctopusList{})
	metav1.AddToGroupVersion(scheme, gv)
	f, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{Scheme: scheme})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*Octopus](t.Context(), f)
	require.ErrorContains(t, err, "is its CRD installed?")

	late := testenv.CRD{Group: gv.Group, Version: gv.Version, Kind: "Octopus", Plural: "octopodes"}
	require.NoError(t, cp.InstallCRD(t.Context(), late))
	deleteCRDAtCleanup(t, cp, late)
	inf, err := sharedinformer.InformerFor[*Octopus](t.Context(), f)
	require.NoError(t, err)
	assert.Equal(t, "octopodes."+gv.Group, inf.Name())
}

func TestATypeNotInTheSchemeIsAnErrorNamingIt(t *testing.T) {
	f, err := sharedinformer.NewFactory(&rest.Config{Host: "https://127.0.0.1:1"}, sharedinformer.FactoryOptions{Scheme: factoryScheme})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*appsv1.Deployment](t.Context(), f)
	require.ErrorContains(t, err, "*v1.Deployment is not in FactoryOptions.Scheme")
}

// The three mistakes a new user made, each an error when the informer is
// asked for, instead of an informer that retries forever.
func TestAWrongResourceASingularNameAndABadSelectorAreErrorsWhenBuilt(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, testenv.Shared(t).Config())

	_, err := sharedinformer.InformerFor[*corev1.Secret](ctx, f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("configmaps")))
	assert.ErrorContains(t, err, "*v1.Secret is kind Secret, but resource configmaps holds ConfigMap")
	kindErr, ok := errors.AsType[*sharedinformer.KindError](err)
	if assert.True(t, ok, "want a *KindError, got %T", err) {
		assert.Equal(t, schema.GroupKind{Kind: "ConfigMap"}, kindErr.Holds)
	}

	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.ForResource(corev1.SchemeGroupVersion.WithResource("configmap")))
	assert.ErrorContains(t, err, `did you mean "configmaps"?`)

	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels("app in ("))
	assert.ErrorContains(t, err, `label selector "app in ("`)
}

// WithTransform(nil) is a mistake (a transform function not yet
// assigned, say), not a request for none: leave the option out for that.
// It was accepted, and the informer ran with no transform.
func TestWithTransformOfANilFunctionIsAnError(t *testing.T) {
	f := newFactory(t, testenv.Shared(t).Config())
	var shrink func(*corev1.ConfigMap) (*corev1.ConfigMap, error) // never assigned
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace("transformed"), sharedinformer.WithTransform(shrink))
	assert.ErrorContains(t, err, "WithTransform was given a nil function")
}

func TestUnstructuredNeedsForResource(t *testing.T) {
	f := newFactory(t, testenv.Shared(t).Config())
	_, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f)
	assert.ErrorContains(t, err, "needs ForResource")
}

func TestFactoryCallersAskingForTheSameScopeShareOneInformerAndOneWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	cfg := cp.Config()
	cfg.UserAgent = "factory-test-" + ns // this run's own: the audit log outlives a run (-count=2)
	f := newFactory(t, cfg)

	a, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace(ns), sharedinformer.WithLabels("a=1,b=2"))
	require.NoError(t, err)
	b, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels("b=2, a=1"), sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	other, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.WithLabels("a=1,b=2"))
	require.NoError(t, err)
	assert.Same(t, a, b, "same type and scope, selectors spelt two ways: one informer")
	assert.NotSame(t, a, other, "another scope is another informer, with its own cache")
	assert.Equal(t, "configmaps in namespace "+ns+", labels a=1,b=2, protobuf", a.Name(), "a built-in type is read as protobuf")
	asJSON, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace(ns), sharedinformer.WithLabels("a=1,b=2"), sharedinformer.WithJSON())
	require.NoError(t, err)
	assert.NotSame(t, a, asJSON, "the encoding is part of the informer's identity")
	assert.Equal(t, "configmaps in namespace "+ns+", labels a=1,b=2", asJSON.Name())

	runCtx, stop := context.WithCancel(ctx)
	f.Start(runCtx)
	require.NoError(t, f.WaitForCacheSync(ctx))
	// Synced means each LIST is in; each reflector opens its WATCH just
	// after. Wait for three, stop, and count again: no fourth came.
	watchFilter := testenv.RequestFilter{Verb: "watch", Resource: "configmaps", UserAgent: cfg.UserAgent}
	require.Eventually(t, func() bool {
		n, err := cp.CountRequests(ctx, watchFilter)
		return err == nil && n >= 3
	}, time.Minute, 10*time.Millisecond, "three informers, three WATCHes")
	stop()
	f.Wait()
	watches, err := cp.CountRequests(ctx, watchFilter)
	require.NoError(t, err)
	assert.Equal(t, 3, watches, "one WATCH for the shared namespace informer, one for its JSON twin, one for the cluster-wide one")
}

func TestOptionsThatShapeAnInformerMayOnlyComeWithTheFirstRequest(t *testing.T) {
	ctx := t.Context()
	f := newFactory(t, testenv.Shared(t).Config())
	first, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("shaped"), sharedinformer.WithMutationDetection())
	require.NoError(t, err)

	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("shaped"), fastRetries)
	assert.ErrorContains(t, err, "WithReflector")

	byApp := sharedinformer.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{"app": indexer.LabelIndexFunc[*corev1.ConfigMap]("app")})
	again, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace("shaped"), byApp)
	require.NoError(t, err, "another caller may add indices")
	assert.Same(t, first, again)
	assert.True(t, first.Indexer().HasIndex("app"))

	_, err = sharedinformer.InformerFor[*corev1.Secret](ctx, f, byApp)
	assert.ErrorContains(t, err, "WithIndexers of *v1.ConfigMap given to an informer of *v1.Secret")
}

// Under RBAC, a user without the right to list ConfigMaps: the informer
// keeps retrying (the right may be granted), and the sync wait says who
// is not synced, for how long, and the server's 403.
func TestTheSyncWaitReportsA403WithTheInformersScope(t *testing.T) {
	cp := testenv.Shared(t) // RBAC, and viewer has no role
	ns := cp.Namespace(t)
	cfg, err := cp.ConfigAs("viewer")
	require.NoError(t, err)
	errs := newErrLog()
	f, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Scheme: factoryScheme, OnError: errs.hook})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(ns), fastRetries)
	require.NoError(t, err)
	startFactory(t, f)

	err = waitForCacheSyncAfter(t, f, errs, apierrors.IsForbidden)
	var notSynced *sharedinformer.NotSyncedError
	require.ErrorAs(t, err, &notSynced)
	t.Log(err)
	assert.True(t, apierrors.IsForbidden(err), "the 403 is in the error: %v", err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	// The message names the measured wait, whatever it was.
	assert.Positive(t, notSynced.Waited)
	assert.Contains(t, err.Error(), fmt.Sprintf("configmaps in namespace %s, protobuf: not synced after %v: ", ns, notSynced.Waited.Round(time.Millisecond)))
}

// waitForCacheSyncAfter waits until f's informers have failed as
// failure says (errs is f's OnError), then for their sync, with a context
// that ends soon after: an informer that cannot list never syncs, so the
// wait ends with a deadline, and what it reports is checked by the test.
func waitForCacheSyncAfter(t *testing.T, f *sharedinformer.Factory, errs *errLog, failure func(error) bool) error {
	t.Helper()
	errs.waitFor(t, "the informer's failure", failure)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	return f.WaitForCacheSync(ctx)
}

// A custom resource whose CRD is not installed yet: the sync wait reports
// the 404; once the CRD is installed the informer syncs, without a restart.
// The CRD's group is this run's own (named after its namespace): a CRD
// stays on the shared control plane, so a repeat (-count=2) under a fixed
// group would find it installed and never see the 404.
func TestAnInformerOfAResourceInstalledLaterReports404ThenSyncs(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	gadgets := testenv.CRD{Group: ns + ".late.listwatch.dev", Version: "v1", Kind: "Gadget", Plural: "gadgets"}
	errs := newErrLog()
	f, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, OnError: errs.hook})
	require.NoError(t, err)
	_, err = sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.InNamespace(ns),
		sharedinformer.ForResource(schema.GroupVersionResource{Group: gadgets.Group, Version: gadgets.Version, Resource: gadgets.Plural}), fastRetries)
	require.NoError(t, err)
	startFactory(t, f)

	err = waitForCacheSyncAfter(t, f, errs, apierrors.IsNotFound)
	require.Error(t, err)
	assert.True(t, apierrors.IsNotFound(err), "the 404 is in the error: %v", err)

	require.NoError(t, cp.InstallCRD(t.Context(), gadgets))
	deleteCRDAtCleanup(t, cp, gadgets)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.WaitForCacheSync(ctx))
}

func TestFactoryWaitReturnsAtOnceBeforeStartAndAfterStopWithoutASyncWait(t *testing.T) {
	// An idle HTTP/2 connection stays in client-go's transport cache, one
	// per configuration for the life of the process, whoever opened it:
	// its read loop is the cache's, not a goroutine the factory leaked.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"))
	f := newFactory(t, testenv.Shared(t).Config())
	f.Wait() // before Start: nothing to wait for

	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace(testenv.Shared(t).Namespace(t)))
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	f.Start(ctx)
	stop() // no WaitForCacheSync ran
	f.Wait()
}

func TestInformerForANilFactoryIsAnErrorNotAPanic(t *testing.T) {
	_, err := sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), nil)
	assert.ErrorContains(t, err, "the factory is nil")
}

// An InformerFor that fails after its metrics claimed the informer's name
// gives the name back, so the corrected request is not a duplicate.
func TestAFailedInformerForLeavesItsMetricsNameFree(t *testing.T) {
	reg, err := metrics.NewRegistry(metrics.NewMemory())
	require.NoError(t, err)
	f, err := sharedinformer.NewFactory(testenv.Shared(t).Config(), sharedinformer.FactoryOptions{Scheme: factoryScheme, Metrics: reg})
	require.NoError(t, err)
	builtIn := sharedinformer.WithIndexers(map[string]indexer.IndexFunc[*corev1.ConfigMap]{indexer.NamespaceIndex: indexer.NamespaceIndexFunc[*corev1.ConfigMap]})
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace("freed"), builtIn)
	require.ErrorContains(t, err, "is built in")
	_, err = sharedinformer.InformerFor[*corev1.ConfigMap](t.Context(), f, sharedinformer.InNamespace("freed"))
	assert.NoError(t, err)
}

// InformerFor lists in one consistent LIST, not in pages: the apiserver
// answers it from its watch cache (WithFactoryDefaults says why).
func TestAFactoryInformerListsInOneUnpagedRequest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := testenv.Shared(t) // audited; count by user agent
	ns := cp.Namespace(t)
	writer := cp.Config()
	writer.QPS = -1 // no client-side rate limit: 600 creates
	client, err := testenv.CoreV1Client(writer)
	require.NoError(t, err)
	for i := range 600 { // more than the reflector's page of 500
		create(ctx, t, client, ns, fmt.Sprintf("cm-%d", i))
	}
	cfg := cp.Config()
	cfg.UserAgent = "unpaged-test-" + ns // this run's own: the audit log outlives a run (-count=2)
	f := newFactory(t, cfg)
	inf, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, f, sharedinformer.InNamespace(ns))
	require.NoError(t, err)
	startFactory(t, f)
	require.NoError(t, f.WaitForCacheSync(ctx))
	assert.Equal(t, 600, inf.Indexer().Len())
	lists, err := cp.CountRequests(ctx, testenv.RequestFilter{Verb: "list", Resource: "configmaps", UserAgent: cfg.UserAgent})
	require.NoError(t, err)
	assert.Equal(t, 1, lists, "600 objects in one LIST")
	assert.Equal(t, reflector.Tuning{PageSize: 500}, sharedinformer.WithFactoryDefaults(reflector.Tuning{PageSize: 500}), "a page size given is kept")
}
