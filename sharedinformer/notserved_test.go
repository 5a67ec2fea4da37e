package sharedinformer_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/testenv"
)

// A list cut short by the deletion of its resource, after its first page
// reached the cache: a list reaches the cache in parts, so "the informer
// never synced" does not mean "nothing was stored". The resource is gone,
// so nothing of it may stay cached: the page's objects are deleted (final
// state unknown), and the informer stays unsynced, as one that never
// listed anything does.
func TestAResourceDeletedMidListLeavesNothingOfItsFirstPageCached(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1")
	zoo.create("octopodes", "a", "b")
	zoo.hook(func(r *http.Request) {
		if r.URL.Query().Get("continue") != "" {
			zoo.serveIn("octopodes") // the CRD is deleted between the two pages
		}
	})
	events := newEventLog()
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{Trace: events.hook, OnError: func(error) {}})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooResource("v1", "octopodes")), sharedinformer.WithReflector(reflector.Tuning{PageSize: 1}))
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)

	// The reflector waits once it has done all it does about a resource
	// that is gone.
	seen := events.waitFor(t, "the backoff after not-served", after(reflector.KindNotServed, reflector.KindBackoff))
	require.True(t, slices.ContainsFunc(seen, func(e informer.TraceEvent) bool {
		return e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindTombstoned && e.Key == "ns/a"
	}), "the first page's ns/a stays cached though its resource is gone")
	final := calls.waitFor(t, "delete a (final state unknown)")
	assert.NotContains(t, final, "add b", "the second page never came")
	assert.Zero(t, inf.Indexer().Len(), "nothing of a resource that is gone stays cached")
	assert.False(t, inf.HasSynced(), "no list finished: the informer has not synced")
}

// A CRD that moves to a new version stops serving the old one, but its
// objects live on, served in the new one. Handlers of an informer of the
// old version must not be told they were deleted: a handler that cleans
// up on delete would act on live objects. They hear nothing; the report
// says the version is no longer served and names the one that is. When
// the old version is served again, the informer lists it from scratch
// and its handlers hear only what changed.
func TestAVersionNoLongerServedDeletesNothingAndNamesTheServedVersion(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1beta1", "v1")
	zoo.create("octopodes", "a", "b")
	errs := newErrLog()
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{OnError: errs.hook})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooResource("v1beta1", "octopodes")),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}))
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)
	calls.waitFor(t, "add b (initial)")

	zoo.serveIn("octopodes", "v1") // the CRD serves v1 alone: v1beta1 answers 404
	zoo.endWatches()
	moved := errs.waitFor(t, "the report of the 404", apierrors.IsNotFound)
	assert.False(t, errors.Is(moved, reflector.ErrNotServed), "the resource is still served, in v1: %v", moved)
	assert.Regexp(t, `v1beta1 .*\bv1\b`, moved.Error(), "the report names the version no longer served and the one served")
	t.Log(moved)

	zoo.create("octopodes", "c")
	zoo.serveIn("octopodes", "v1beta1", "v1") // served again, with one object more
	assert.Equal(t, []string{"add a (initial)", "add b (initial)", "add c"}, calls.waitFor(t, "add c"),
		"no delete for objects that still exist")
	var names []string
	for _, obj := range inf.Lister().List(labels.Everything()) {
		names = append(names, obj.GetName())
	}
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names)
}

// Once no version of the resource is served, the resource is gone, and
// its objects with it: what the informer kept while only its version was
// gone is deleted then, each a delete whose final state is unknown.
func TestAResourceGoneAfterItsVersionMovedIsDeletedFromTheCache(t *testing.T) {
	zoo := newZooServer(t)
	zoo.serveIn("octopodes", "v1beta1", "v1")
	zoo.create("octopodes", "a")
	errs := newErrLog()
	f, err := sharedinformer.NewFactory(zoo.config(), sharedinformer.FactoryOptions{OnError: errs.hook})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f,
		sharedinformer.ForResource(zooResource("v1beta1", "octopodes")),
		sharedinformer.WithReflector(reflector.Tuning{BackoffInitial: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}))
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)
	calls.waitFor(t, "add a (initial)")

	zoo.serveIn("octopodes", "v1")
	zoo.endWatches()
	moved := errs.waitFor(t, "the report of the 404", apierrors.IsNotFound)
	require.False(t, errors.Is(moved, reflector.ErrNotServed), "only the version went: %v", moved)

	zoo.serveIn("octopodes") // the CRD is deleted
	gone := errs.waitFor(t, "the report that the resource is gone", func(err error) bool { return errors.Is(err, reflector.ErrNotServed) })
	assert.True(t, apierrors.IsNotFound(gone), "the 404 is kept: %v", gone)
	assert.Equal(t, []string{"add a (initial)", "delete a (final state unknown)"}, calls.waitFor(t, "delete a (final state unknown)"))
	assert.Zero(t, inf.Indexer().Len())
}

// The stand-in's discovery agrees with kube-apiserver's: a CRD moved
// from v1alpha1 to v1 on the real control plane is reported as a version
// gone, not a resource gone, and its object is deleted from the cache
// only once the CRD itself is deleted.
func TestAVersionMovedOnTheRealAPIServerDeletesNothingUntilTheCRDIsDeleted(t *testing.T) {
	cp := testenv.Shared(t)
	ns := cp.Namespace(t)
	client, err := testenv.CoreV1Client(cp.Config())
	require.NoError(t, err)
	crd := testenv.CRD{Group: "moves.listwatch.dev", Version: "v1alpha1", Kind: "Mover", Plural: "movers"}
	require.NoError(t, cp.InstallCRD(t.Context(), crd))
	require.NoError(t, client.Post().AbsPath("/apis/moves.listwatch.dev/v1alpha1/namespaces", ns, "movers").
		Body([]byte(`{"apiVersion":"moves.listwatch.dev/v1alpha1","kind":"Mover","metadata":{"name":"m1"}}`)).Do(t.Context()).Error())
	errs := newErrLog()
	f, err := sharedinformer.NewFactory(cp.Config(), sharedinformer.FactoryOptions{OnError: errs.hook})
	require.NoError(t, err)
	inf, err := sharedinformer.InformerFor[*unstructured.Unstructured](t.Context(), f, sharedinformer.InNamespace(ns),
		sharedinformer.ForResource(schema.GroupVersionResource{Group: crd.Group, Version: crd.Version, Resource: crd.Plural}), fastRetries)
	require.NoError(t, err)
	calls := newCallLog()
	_, err = inf.AddEventHandler(calls)
	require.NoError(t, err)
	startFactory(t, f)
	calls.waitFor(t, "add m1 (initial)")

	version := func(name string, current bool) string {
		return fmt.Sprintf(`{"name":%q,"served":%t,"storage":%t,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}`, name, current, current)
	}
	require.NoError(t, client.Patch(types.MergePatchType).AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.Plural+"."+crd.Group).
		Body([]byte(fmt.Sprintf(`{"spec":{"versions":[%s,%s]}}`, version("v1alpha1", false), version("v1", true)))).Do(t.Context()).Error())
	// kube-apiserver ends the watch before its discovery drops v1alpha1:
	// a 404 that meets discovery still listing it is reported as a plain
	// 404 and retried, so the test waits for the report of the move, not
	// for the first 404.
	moved := errs.waitFor(t, "the report of the version moved", func(err error) bool {
		var versionGone *reflector.VersionNotServedError
		return errors.As(err, &versionGone)
	})
	assert.True(t, apierrors.IsNotFound(moved), "the 404 is kept: %v", moved)
	require.False(t, errors.Is(moved, reflector.ErrNotServed), "the resource is still served, in v1: %v", moved)
	assert.Regexp(t, `v1alpha1 .*\bv1\b`, moved.Error())

	crd.Version = "v1"
	require.NoError(t, cp.DeleteCRD(t.Context(), crd))
	errs.waitFor(t, "the report that the resource is gone", func(err error) bool { return errors.Is(err, reflector.ErrNotServed) })
	assert.Equal(t, []string{"add m1 (initial)", "delete m1 (final state unknown)"}, calls.waitFor(t, "delete m1 (final state unknown)"))
}

// after says whether the events hold first, then a later event of kind
// then, both from the reflector.
func after(first, then string) func([]informer.TraceEvent) bool {
	return func(events []informer.TraceEvent) bool {
		i := slices.IndexFunc(events, func(e informer.TraceEvent) bool {
			return e.Stage == informer.StageReflector && e.Kind == first
		})
		return i >= 0 && slices.ContainsFunc(events[i:], func(e informer.TraceEvent) bool {
			return e.Stage == informer.StageReflector && e.Kind == then
		})
	}
}
