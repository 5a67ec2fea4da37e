package scale

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/testenv"
)

// smallWidgets is how many Widgets the tests create: enough to span
// every namespace and several list parts, few enough for seconds.
const smallWidgets = 300

// One control plane holds smallWidgets Widgets, created the ladder's way
// (Populate); each subtest proves one behaviour on it.
func TestWidgetsAtSmallScale(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := testenv.Start(ctx, testenv.Options{})
	require.NoError(t, err)
	defer cp.Stop()
	require.NoError(t, Populate(ctx, cp.Config(), Widgets, smallWidgets))

	t.Run("PopulateCreatesExactlyTheWidgetsAskedFor", func(t *testing.T) {
		n, err := CountObjects(ctx, cp.Config(), Widgets)
		require.NoError(t, err)
		assert.Equal(t, smallWidgets, n)
	})
	t.Run("AWidgetReadBackHoldsItsPayload", func(t *testing.T) {
		client, err := clientFor(cp.Config(), Widgets)
		require.NoError(t, err)
		var got Widget
		require.NoError(t, client.Get().Namespace(namespaceOf(7)).Resource(Widgets).Name(NewWidget(7).Name).Do(ctx).Into(&got))
		assert.Equal(t, NewWidget(7).Spec, got.Spec)
		assert.Equal(t, NewWidget(7).Labels, got.Labels)
	})
	t.Run("InstallingTheCRDAgainWaitsUntilItIsServed", func(t *testing.T) {
		require.NoError(t, cp.InstallCRD(ctx, widgetsCRD))
	})
	// RunSync fails unless the cache holds exactly the objects asked for,
	// and unless the request log saw the list go out.
	t.Run("EveryVariantSyncsExactlyTheWidgetsCreated", func(t *testing.T) {
		for _, lib := range []string{Ours, ClientGo} {
			for _, v := range VariantsOf(Widgets) {
				t.Run(lib+" "+string(v), func(t *testing.T) {
					s, err := RunSync(ctx, SyncJob{Kubeconfig: cp.KubeconfigPath(), Library: lib, Shape: Widgets, Variant: v, Objects: smallWidgets})
					require.NoError(t, err)
					assert.Contains(t, s.Request, "GET "+collectionPath(Widgets))
					assert.Greater(t, s.HeapPerObject, 0.0)
					t.Logf("%s → %s", s.Request, s.Answer)
				})
			}
		}
	})
	// The floor is one unpaged LIST read to the end: at least 100 bytes
	// per object, or floorOnce fails.
	t.Run("TheRawFloorReadsEveryWidgetAsJSON", func(t *testing.T) {
		assert.Equal(t, "JSON", encodingOf(Widgets))
		seconds, err := floorOnce(ctx, cp.Config(), Widgets, smallWidgets)
		require.NoError(t, err)
		assert.Greater(t, seconds, 0.0)
	})
	// Relists fails unless every Widget is applied again after each
	// injected 410.
	t.Run("EveryRelistKindRelistsEveryWidget", func(t *testing.T) {
		for _, kind := range RelistKindsOf(Widgets) {
			runs, _, err := Relists(ctx, unlimited(cp.Config()), Widgets, kind, "", smallWidgets, 1)
			require.NoError(t, err, kind)
			require.Len(t, runs, 1, kind)
			assert.Greater(t, runs[0].Seconds, 0.0, kind)
		}
	})
	t.Run("StartRunsTheSameInformersForSyncpair", func(t *testing.T) {
		for _, lib := range []string{Ours, ClientGo} {
			for _, v := range VariantsOf(Widgets) {
				started, err := Start(ctx, unlimited(cp.Config()), Widgets, lib, v)
				require.NoError(t, err, "%s %s", lib, v)
				require.Eventually(t, started.HasSynced, time.Minute, time.Millisecond, "%s %s", lib, v)
				assert.Equal(t, smallWidgets, started.Len(), "%s %s", lib, v)
				started.Stop()
			}
		}
	})
}

// A sync the ladder cannot build is an error that names what it can,
// before any request is sent.
func TestASyncOfAVariantTheShapeDoesNotHaveIsAnError(t *testing.T) {
	for _, c := range []struct {
		job  SyncJob
		want string
	}{
		{SyncJob{Library: Ours, Shape: Widgets, Variant: Defaults}, `widgets have no variant "defaults" (have [typed unstructured partial-metadata])`},
		{SyncJob{Library: ClientGo, Shape: ConfigMaps, Variant: Typed}, `configmaps have no variant "typed"`},
		{SyncJob{Library: "controller-runtime", Shape: Widgets, Variant: Typed}, `no library "controller-runtime"`},
		{SyncJob{Library: Ours, Shape: "gadgets", Variant: Typed}, `no shape "gadgets"`},
	} {
		_, err := RunSync(context.Background(), c.job)
		if assert.Error(t, err, "%+v", c.job) {
			assert.Contains(t, err.Error(), c.want)
		}
		_, err = Start(context.Background(), nil, c.job.Shape, c.job.Library, c.job.Variant)
		assert.Error(t, err, "%+v", c.job)
	}
}

// A relist kind the shape lacks is an error that names the kinds it has,
// before any request is sent.
func TestARelistKindTheShapeLacksIsAnError(t *testing.T) {
	for _, c := range []struct{ shape, kind, want string }{
		{Widgets, OursJSON, `no relist kind "ours-json" of widgets (have [ours ours-unstructured`},
		{ConfigMaps, ClientGoDynamic, `no relist kind "client-go-dynamic"`},
		{Pods, Ours, `no relists of "pods"`},
	} {
		_, _, err := Relists(context.Background(), nil, c.shape, c.kind, "", 1, 1)
		if assert.Error(t, err, "%s %s", c.shape, c.kind) {
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

// An object of a shape the ladder does not have is an error before any
// request is sent.
func TestPopulatingAnUnknownShapeIsAnError(t *testing.T) {
	err := populate(context.Background(), nil, "gadgets", 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no shape "gadgets"`)
}
