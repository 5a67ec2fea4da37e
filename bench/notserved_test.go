package bench

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

var widgets = testenv.CRD{Group: "gone.listwatch.dev", Version: "v1", Kind: "Widget", Plural: "widgets"}

// notServedBound is how soon after its CRD is gone an informer must say
// so: its open watch ends, the re-watch gets a 404, and discovery says
// "gone" twice, BackoffInitial (100 ms here) apart. The test logs how
// long it took; docs/06 quotes it.
const notServedBound = 10 * time.Second

// A CRD is deleted under two informers of its resource, ours and
// client-go's dynamic one (this comparison lives in bench/, the one place
// client-go's informer machinery is imported). Ours reports
// the resource gone once and makes no more requests for it; client-go's
// keeps listing, one LIST per backoff period, and reports each. Then the
// CRD comes back with new objects, and ours syncs those, and only those.
func TestADeletedCRDStopsTheInformerWhereClientGoKeepsListing(t *testing.T) {
	cp := testenv.Shared(t) // audited; count by user agent
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ns := cp.Namespace(t)
	require.NoError(t, cp.InstallCRD(ctx, widgets))
	createWidgets(ctx, t, cp.Config(), ns, "old-1", "old-2", "old-3")
	gvr := schema.GroupVersionResource{Group: widgets.Group, Version: widgets.Version, Resource: widgets.Plural}

	ours := cp.Config()
	ours.UserAgent = "ours-not-served"
	var reported errorList
	f, err := sharedinformer.NewFactory(ours, sharedinformer.FactoryOptions{OnError: reported.add})
	require.NoError(t, err)
	// A backoff capped at 1 s asks discovery every second at most while
	// the resource is gone, so that the test sees the CRD come back soon;
	// it makes no difference to the requests for the resource: none.
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, f, sharedinformer.ForResource(gvr), sharedinformer.InNamespace(ns),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 100 * time.Millisecond, BackoffMax: time.Second}))
	require.NoError(t, err)
	seen := &seenNames{}
	_, err = inf.AddEventHandler(seen)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	f.Start(runCtx)
	defer func() { stop(); f.Wait() }()

	theirs := cp.Config()
	theirs.UserAgent = "client-go-not-served"
	var theirFailures atomic.Int32
	theirInformer := dynamicinformer.NewFilteredDynamicInformer(dynamic.NewForConfigOrDie(theirs), gvr, ns, 0, cache.Indexers{}, nil).Informer()
	require.NoError(t, theirInformer.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) { theirFailures.Add(1) }))
	go theirInformer.RunWithContext(ctx)

	require.NoError(t, f.WaitForCacheSync(ctx))
	require.True(t, cache.WaitForCacheSync(ctx.Done(), theirInformer.HasSynced))
	require.Empty(t, reported.all())

	deleted := time.Now()
	require.NoError(t, cp.DeleteCRD(ctx, widgets))
	// kube-apiserver ends the watch before its discovery drops the
	// resource: a 404 that meets discovery still listing it is reported
	// as a plain 404 and retried, so the test waits for the report that
	// the resource is gone, not for the first report.
	require.Eventually(t, func() bool { return reported.notServed() > 0 }, notServedBound, 10*time.Millisecond, "the informer never said the resource is gone")
	t.Logf("reported gone %v after the CRD was", time.Since(deleted).Round(time.Millisecond))
	for _, err := range reported.all() {
		assert.True(t, apierrors.IsNotFound(err), "every report is of the 404: %v", err)
	}
	assert.Zero(t, inf.Indexer().Len(), "nothing of the deleted resource is cached")
	seen.eventually(t, "-old-1", "-old-2", "-old-3")
	reportsBefore := len(reported.all())

	// Count from here, while client-go fails two more times.
	ourRequests, theirLists := countWidgetRequests(ctx, t, cp, ours.UserAgent, "list", "watch"), countWidgetRequests(ctx, t, cp, theirs.UserAgent, "list")
	theirFailed := theirFailures.Load()
	require.Eventually(t, func() bool { return theirFailures.Load() >= theirFailed+2 }, time.Minute, 50*time.Millisecond)
	ourAfter, theirAfter := countWidgetRequests(ctx, t, cp, ours.UserAgent, "list", "watch"), countWidgetRequests(ctx, t, cp, theirs.UserAgent, "list")
	t.Logf("while client-go failed twice more: client-go %d LISTs, ours %d LISTs or WATCHes, %d errors reported (client-go %d)",
		theirAfter-theirLists, ourAfter-ourRequests, len(reported.all()), theirFailures.Load())
	assert.Equal(t, ourRequests, ourAfter, "no request for a resource that is not served")
	assert.GreaterOrEqual(t, theirAfter-theirLists, 2, "client-go lists on")
	assert.Len(t, reported.all(), reportsBefore, "nothing reported while not served: %v", reported.all())
	assert.Equal(t, 1, reported.notServed(), "reported gone once: %v", reported.all())

	require.NoError(t, cp.InstallCRD(ctx, widgets))
	createWidgets(ctx, t, cp.Config(), ns, "new-1", "new-2")
	seen.eventually(t, "-old-1", "-old-2", "-old-3", "+new-1", "+new-2")
	assert.ElementsMatch(t, []informer.Key{{Namespace: ns, Name: "new-1"}, {Namespace: ns, Name: "new-2"}}, inf.Indexer().ListKeys(), "a fresh list, nothing from before")
}

// createWidgets creates custom objects of widgets in ns.
func createWidgets(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, names ...string) {
	t.Helper()
	client, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	gvr := schema.GroupVersionResource{Group: widgets.Group, Version: widgets.Version, Resource: widgets.Plural}
	for _, name := range names {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": widgets.Group + "/" + widgets.Version, "kind": widgets.Kind,
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": len(name)},
		}}
		_, err := client.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
	}
}

// countWidgetRequests counts the requests for widgets of one user agent
// with any of verbs.
func countWidgetRequests(ctx context.Context, t *testing.T, cp *testenv.ControlPlane, userAgent string, verbs ...string) int {
	t.Helper()
	total := 0
	for _, verb := range verbs {
		n, err := cp.CountRequests(ctx, testenv.RequestFilter{Verb: verb, Resource: widgets.Plural, UserAgent: userAgent})
		require.NoError(t, err)
		total += n
	}
	return total
}

// seenNames records the changes a handler hears of, after its initial
// list: adds as "+name", deletes as "-name".
type seenNames struct {
	mu    sync.Mutex
	calls []string
}

func (s *seenNames) OnAdd(obj *unstructured.Unstructured, initial bool) {
	if !initial {
		s.record("+" + obj.GetName())
	}
}
func (s *seenNames) OnUpdate(_, _ *unstructured.Unstructured)        {}
func (s *seenNames) OnDelete(obj *unstructured.Unstructured, _ bool) { s.record("-" + obj.GetName()) }

func (s *seenNames) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

// eventually waits until s has recorded want, in any order.
func (s *seenNames) eventually(t *testing.T, want ...string) {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Equal(want, slices.Sorted(slices.Values(s.calls)))
	}, notServedBound, 10*time.Millisecond, "want %q", want)
}

// errorList collects what an informer reports.
type errorList struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorList) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

func (l *errorList) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.errs)
}

// notServed is how many of the errors say the resource is gone.
func (l *errorList) notServed() int {
	n := 0
	for _, err := range l.all() {
		if errors.Is(err, reflector.ErrNotServed) {
			n++
		}
	}
	return n
}
