package scale

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheLadderRunsEveryWorkloadAt1k runs the whole ladder's code once,
// at 1k objects and one pair per row, against a real control plane, so
// that `make test` keeps `make scale` from rotting. It proves the code
// runs and every informer synced every object (the runs check that); it
// judges no goal, since one pair gives no interval. The 1k etcd is
// populated once, in the cache `make scale` uses too (DefaultCacheDir):
// a warm run starts on a copy, as every size of the ladder does.
func TestTheLadderRunsEveryWorkloadAt1k(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cacheDir, err := DefaultCacheDir()
	require.NoError(t, err)
	cfg := Config{
		Sizes: []int{1000}, Count: 1, RelistCount: 1, BoundedRelists: 2,
		InProcessSizes: []int{1000}, InProcessCount: 1,
		StoreSizes: []int{1000}, StoreRun: 50 * time.Millisecond,
		PodSizes: []int{1000}, WidgetSizes: []int{1000}, WatchCacheOff: true, CacheDir: cacheDir,
		Child:     RunInProcess,
		SyncChild: RunSync,
		Logf:      t.Logf,
	}
	res, err := Run(ctx, cfg)
	require.NoError(t, err)

	for _, want := range []struct {
		workload, shape, variant string
	}{
		{InitialSync, ConfigMaps, string(Defaults)},
		{InformerCPU, ConfigMaps, string(Defaults)},
		{InitialSync, ConfigMaps, string(StreamJSON)},
		{InitialSync, ConfigMaps, string(ListJSON)},
		{InitialSync, ConfigMaps, string(Defaults) + watchCacheOff},
		{HeapPerObject, ConfigMaps, string(Stripped)},
		{HeapPerObject, ConfigMaps, string(MetadataOnly)},
		{HeapPerObject, Pods, string(Defaults)},
		{ServerCPU, Pods, string(StreamJSON)},
		{InitialSync, Widgets, string(Typed)},
		{HeapPerObject, Widgets, string(Unstructured)},
		{InitialSync, Widgets, string(PartialMetadata)},
		{Relist, ConfigMaps, "defaults"},
		{StoreWrites, ConfigMaps, "readers=10"},
		{StoreReads, ConfigMaps, "readers=1"},
		{InProcessSync, ConfigMaps, "paged protobuf"},
	} {
		row, ok := res.Find(want.workload, want.shape, 1000, want.variant)
		if assert.True(t, ok, "no row for %+v", want) {
			r, err := row.Ratio()
			require.NoError(t, err, "%+v", want)
			assert.Greater(t, r.Value, 0.0, "%+v", want)
		}
	}
	if sync, ok := res.Find(InitialSync, ConfigMaps, 1000, string(Defaults)); assert.True(t, ok) {
		assert.Len(t, sync.Foreign, 1, "every served pair measures the foreign load")
	}
	if heap, ok := res.Find(HeapPerObject, ConfigMaps, 1000, string(Defaults)); assert.True(t, ok) {
		assert.Greater(t, heap.Ours[0], 1000.0, "a ~1 KiB ConfigMap cannot take less than 1 KiB of heap")
	}
	stripped, _ := res.Find(HeapPerObject, Pods, 1000, string(Stripped))
	metadataOnly, _ := res.Find(HeapPerObject, ConfigMaps, 1000, string(MetadataOnly))
	lossless, _ := res.Find(HeapPerObject, ConfigMaps, 1000, string(Defaults))
	assert.NotEmpty(t, stripped.Ours)
	assert.Less(t, metadataOnly.Ours[0], lossless.Ours[0], "dropping the data must show in the heap")
	require.Len(t, res.Floors, 3, "a floor for each shape")
	assert.Equal(t, Floor{Shape: Widgets, N: 1000, Encoding: "JSON"}, Floor{Shape: res.Floors[2].Shape, N: res.Floors[2].N, Encoding: res.Floors[2].Encoding})
	require.NotNil(t, res.Bounded)
	assert.Len(t, res.Bounded.Growth, 2)

	for _, g := range res.Goals() {
		assert.NotEqual(t, Met, g.Verdict, "one pair judges nothing: %s", g.Text)
	}
	request := func(variant, lib string) string {
		for _, r := range res.Requests {
			if r.Shape == ConfigMaps && r.Variant == variant && r.Library == lib {
				return r.Request + " → " + r.Answer
			}
		}
		return ""
	}
	// Every informer lists every namespace; what each asked for is
	// recorded as it went out.
	assert.Contains(t, request(string(Defaults), Ours), "GET /api/v1/configmaps (")
	assert.Contains(t, request(string(Defaults), Ours), "application/vnd.kubernetes.protobuf")
	assert.Contains(t, request(string(StreamJSON), Ours), "sendInitialEvents=true")
	assert.Contains(t, request(string(ListJSON), ClientGo), "resourceVersion=0")
	assert.Contains(t, request(string(ListJSON), ClientGo), "application/json")
	for _, r := range res.Requests {
		if r.Shape == Widgets {
			assert.Contains(t, r.Request, "GET /apis/bench.listwatch.dev/v1/widgets", "%+v", r)
		}
	}
	md := res.Markdown(nil)
	assert.Contains(t, md, "#### Goals")
	assert.Contains(t, md, "#### The request that carried each initial list")
	assert.Contains(t, md, "#### Relist")
	assert.Empty(t, res.Charts(), "a growth chart needs two sizes")
}

// A goal is judged only on pairs that ran on a machine nothing else was
// using: one pair with foreign load over the limit makes it not judged,
// however good its ratio.
func TestAGoalWhoseRowSawForeignLoadIsNotJudged(t *testing.T) {
	results := func(foreign ...float64) *Results {
		res := &Results{Config: Config{Sizes: []int{100_000}}}
		proto := Row{Workload: InitialSync, Shape: ConfigMaps, N: 100_000, Variant: string(Defaults), Unit: "s"}
		for _, f := range foreign {
			res.add(proto, 3.0, 6.0)
			res.addForeign(proto, f)
		}
		return res
	}
	goal := func(res *Results) Goal {
		for _, g := range res.Goals() {
			if g.Text == "initial sync at 100k, each library's defaults: ≤ 0.8×" {
				return g
			}
		}
		t.Fatal("no initial-sync goal")
		return Goal{}
	}
	quiet := goal(results(0.01, 0.02, 0.03, 0.01, 0.02))
	assert.Equal(t, Met, quiet.Verdict, "0.5× with every pair quiet")
	busy := goal(results(0.01, 0.02, 0.35, 0.01, 0.02))
	assert.Equal(t, NotJudged, busy.Verdict)
	assert.Contains(t, busy.Note, "0.35 cores")
}
