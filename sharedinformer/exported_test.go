package sharedinformer_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// eventuallyValue waits until the series of the informer "cms" has want.
// The bound guards against a hang; the value is what is asserted.
func eventuallyValue(t *testing.T, mem *metrics.Memory, want float64, name string, extra ...string) {
	t.Helper()
	values := append([]string{"cms", "", "v1", "configmaps"}, extra...)
	require.Eventually(t, func() bool {
		v, _ := mem.Value(name, values...)
		return v == want
	}, time.Minute, time.Millisecond, "%s%v = %v", name, extra, want)
}

func TestExportedMetricsFollowAnInformerThroughSyncARelistAndADelete(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Name: "cms", Trace: exported.Hook()})
	for _, name := range []string{"a", "b", "doomed"} {
		_, err := lw.Create(configMap(name))
		require.NoError(t, err)
	}
	rec := &recorder{}
	_, err = inf.AddEventHandler(rec, sharedinformer.HandlerOptions{Name: "audit"})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	eventuallyValue(t, mem, 3, "listwatch_informer_cached_objects")
	eventuallyValue(t, mem, 1, "listwatch_informer_lists_total")
	eventuallyValue(t, mem, 1, "listwatch_informer_watches_total")
	eventuallyValue(t, mem, 0, "informer_queued_items")
	eventuallyValue(t, mem, 3, "informer_processing_latency_seconds") // three keys processed
	rv, err := rvNumber(lw.ResourceVersion())
	require.NoError(t, err)
	eventuallyValue(t, mem, rv, "informer_store_resource_version")
	rec.eventually(t, "add a (initial)", "add b (initial)", "add doomed (initial)")
	eventuallyValue(t, mem, 0, "listwatch_informer_handler_buffer_depth", "audit")

	// A delete missed during an outage, then history compacted: a 410 and
	// a relist, which infers the delete.
	lw.Disconnect()
	require.NoError(t, lw.Delete(informer.Key{Namespace: "default", Name: "doomed"}))
	lw.Compact()
	lw.Reconnect()
	eventuallyValue(t, mem, 1, "listwatch_informer_relists_total", "expired")
	eventuallyValue(t, mem, 2, "listwatch_informer_cached_objects")
	rv, err = rvNumber(lw.ResourceVersion())
	require.NoError(t, err)
	eventuallyValue(t, mem, rv, "informer_store_resource_version")
	v, _ := mem.Value("listwatch_informer_relists_total", "cms", "", "v1", "configmaps", "failed")
	assert.Zero(t, v, "every cause has a series, from zero")
}

// The applied lag: while the pop loop is held inside a change, the
// reflector has received it, and the cache trails by that one
// resourceVersion; once it is applied, by none.
func TestTheAppliedLagCountsWhatTheInformerReceivedButHasNotApplied(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	hook, received := traced(reflector.KindResourceVersion)
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Name: "cms", Trace: informer.Tee(exported.Hook(), hook),
		Indexers: map[string]indexer.IndexFunc[*corev1.ConfigMap]{"gate": g.index}})
	runInformer(t, inf)
	waitSynced(t, inf)
	eventuallyValue(t, mem, 0, "listwatch_informer_applied_lag_revisions")

	blocked, err := lw.Create(configMap("block"))
	require.NoError(t, err)
	<-g.entered // the pop loop is inside "block"
	waitRV(t, received, blocked.ResourceVersion)
	eventuallyValue(t, mem, 1, "listwatch_informer_applied_lag_revisions")
	close(g.release)
	eventuallyValue(t, mem, 0, "listwatch_informer_applied_lag_revisions")
}

// A list handed over in parts may end with nothing left to pop: every
// part was applied while the list was read. Its resourceVersion is then
// applied at its end, and the store's gauge must say so, not wait for the
// next change.
func TestAListWhosePartsWereAllAppliedSetsTheStoresResourceVersionAtItsEnd(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	hook := exported.Hook()
	fifo := func(kind, key, rv string) {
		hook(informer.TraceEvent{Stage: informer.StageFIFO, Kind: kind, Key: key, ResourceVersion: rv, Time: time.Now()})
	}
	fifo(deltafifo.KindQueued, "default/a", "7")
	fifo(deltafifo.KindPopped, "default/a", "7")
	fifo(deltafifo.KindProcessed, "default/a", "") // the list's resourceVersion is not applied yet
	fifo(deltafifo.KindReplaced, "", "9")
	v, ok := mem.Value("informer_store_resource_version", "cms", "", "v1", "configmaps")
	require.True(t, ok)
	assert.Equal(t, 9.0, v)
}

func TestTwoInformersWithOneNameAndResourceInOneRegistryAreAnError(t *testing.T) {
	reg, err := metrics.NewRegistry(metrics.NewMemory())
	require.NoError(t, err)
	_, err = sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	_, err = sharedinformer.NewExportedMetrics(reg, "cms", schema.GroupVersionResource{Version: "v1", Resource: "secrets"})
	require.NoError(t, err, "one name, another resource: other series")
	_, err = sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	_, isDup := errors.AsType[*metrics.DuplicateError](err)
	assert.True(t, isDup, "a *metrics.DuplicateError, not %v", err)
	assert.ErrorContains(t, err, `informer "cms" is registered twice`)

	_, err = sharedinformer.NewExportedMetrics(reg, "cms", schema.GroupVersionResource{})
	assert.ErrorContains(t, err, `informer "cms" has no resource`)
	none, err := sharedinformer.NewExportedMetrics(nil, "cms", configMaps)
	assert.NoError(t, err)
	assert.Nil(t, none.Hook(), "no registry: no hook, no cost")
}

// rvNumber is a memlistwatch resourceVersion as the gauge holds it.
func rvNumber(rv string) (float64, error) { return strconv.ParseFloat(rv, 64) }

// A relist's cause label is the event's Reason, a token from a fixed set.
// Its Detail, a sentence for people, is never read for it: a Detail that
// names other causes counts nothing under them, and a relist whose event
// has no Reason counts under no cause at all.
func TestARelistsCauseLabelIsItsReasonNeverReadFromItsDetail(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	relist := func(reason, detail string) {
		exported.Hook()(informer.TraceEvent{Stage: informer.StageReflector, Kind: reflector.KindRelist, Reason: reason, Detail: detail})
	}
	relist(reflector.CauseExpired, "the watch failed, then the list was too large and went back: 410 Gone")
	relist("", "failed: expired, too-large")

	counts := map[string]float64{}
	for _, cause := range []string{reflector.CauseExpired, reflector.CauseTooLarge, reflector.CauseWentBack,
		reflector.CauseFailed, reflector.CauseStoreRefused, reflector.CauseNoRV, reflector.CauseServedAgain} {
		v, ok := mem.Value("listwatch_informer_relists_total", "cms", "", "v1", "configmaps", cause)
		require.True(t, ok, "every cause has a series")
		if v != 0 {
			counts[cause] = v
		}
	}
	assert.Equal(t, map[string]float64{reflector.CauseExpired: 1}, counts)
}

// labelValue is one name="value" pair of a series as metrics.Memory
// prints it.
var labelValue = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// Labels are bounded: no series of an informer's metrics or a queue's is
// labelled by an object's key, name, namespace or resourceVersion, each of
// which would make a series per object. Objects in three namespaces go
// through an informer with a handler, are updated and listed again after
// a 410, and their keys through a workqueue; then every label value of
// every series is none of those.
func TestNoMetricIsLabelledByAnObjectsKeyNamespaceOrResourceVersion(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	qm, err := workqueue.NewExportedMetrics(reg, "cms-queue", nil)
	require.NoError(t, err)
	queue := workqueue.New(workqueue.Options[informer.Key]{Trace: qm.Hook()})
	inf, lw := newMemInformer(t, sharedinformer.Options[*corev1.ConfigMap]{Name: "cms", Trace: exported.Hook()})

	perObject := map[string]bool{}
	write := func(cm *corev1.ConfigMap, err error) {
		t.Helper()
		require.NoError(t, err)
		key := informer.Key{Namespace: cm.Namespace, Name: cm.Name}
		perObject[key.String()], perObject[cm.Namespace], perObject[cm.Name], perObject[cm.ResourceVersion] = true, true, true, true
	}
	for _, ns := range []string{"ns-alpha", "ns-beta", "ns-gamma"} {
		for _, name := range []string{"obj-one", "obj-two"} {
			cm := configMap(name)
			cm.Namespace = ns
			write(lw.Create(cm))
		}
	}
	_, err = inf.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue), sharedinformer.HandlerOptions{Name: "audit"})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)
	// A change made while the watch is down, then compacted away: the
	// informer's resourceVersion is older than the compaction, so its
	// watch meets 410 and it relists. (Made before the Disconnect, the
	// change could reach the informer first; a watch from the newest
	// version is no 410, and no relist would come.)
	lw.Disconnect()
	changed := configMap("obj-one")
	changed.Namespace, changed.Data = "ns-beta", map[string]string{"v": "2"}
	write(lw.Update(changed))
	lw.Compact()
	lw.Reconnect()
	eventuallyValue(t, mem, 1, "listwatch_informer_relists_total", "expired")
	eventuallyValue(t, mem, 6, "listwatch_informer_cached_objects")
	for queue.Len() > 0 {
		key, err := queue.Get(t.Context())
		require.NoError(t, err)
		queue.Done(key)
	}

	series := strings.Split(mem.String(), "\n")
	require.Greater(t, len(series), 10, "the informer's and the queue's series")
	for _, line := range series {
		id, _, _ := strings.Cut(line, " ")
		for _, m := range labelValue.FindAllStringSubmatch(id, -1) {
			assert.False(t, perObject[m[2]], "%s: label %s is an object's %q", id, m[1], m[2])
		}
	}
}

// informer_queued_items has client-go's name, but counts keys: a key
// changed three times before it is popped is one queued item here, where
// client-go's RealFIFO, one entry per event, counts three (docs/15).
func TestQueuedItemsCountsKeysNotEvents(t *testing.T) {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
	require.NoError(t, err)
	exported, err := sharedinformer.NewExportedMetrics(reg, "cms", configMaps)
	require.NoError(t, err)
	fifo, err := deltafifo.New(deltafifo.Options[*corev1.ConfigMap]{Trace: exported.Hook()})
	require.NoError(t, err)
	cm := configMap("hot")
	require.NoError(t, fifo.Add(cm))
	require.NoError(t, fifo.Update(cm))
	require.NoError(t, fifo.Update(cm))
	v, ok := mem.Value("informer_queued_items", "cms", "", "v1", "configmaps")
	require.True(t, ok)
	assert.Equal(t, 1.0, v, "one key, three events")
}
