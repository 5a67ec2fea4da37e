package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer/examples/internal/cli"
	"github.com/listwatch/informer/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

// scrape fetches /metrics over HTTP and parses it with Prometheus' own
// text parser, as a Prometheus server would.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// value returns the value of the series of family name whose labels
// include want, and whether there is one: a counter's or gauge's value, a
// histogram's sample count.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// waitFor scrapes until cond holds of a scrape, and returns that scrape.
// The bound guards against a hang: the values asserted are what the test
// caused, not what a moment happened to show.
func waitFor(t *testing.T, url, what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	t.Helper()
	var last map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		last = scrape(t, url)
		return cond(last)
	}, 2*time.Minute, 50*time.Millisecond, "waiting for %s", what)
	return last
}

func createConfigMap(ctx context.Context, client *rest.RESTClient, ns, name string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}
	return client.Post().Namespace(ns).Resource("configmaps").Body(cm).Do(ctx).Error()
}

// Against a real API server with its watch cache off: N creates show as N
// queue adds and N cached objects; then a watch cut while history is
// compacted is answered 410 Gone, the informer relists, and the scrape
// shows the relist, the delete it inferred, and the resourceVersion moved.
func TestMetricsEndpointShowsWhatTheTestCausedAgainstARealAPIServer(t *testing.T) {
	cp := testenv.Private(t, testenv.Options{DisableWatchCache: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	client, err := cli.CoreV1(cp.Config())
	require.NoError(t, err)

	const n = 5
	for i := range n {
		require.NoError(t, createConfigMap(ctx, client, ns, fmt.Sprintf("cm-%d", i)))
	}

	// The example's machinery, connected through a fault proxy we can cut.
	proxy, viaProxy, err := cli.StartProxy(cp.Config())
	require.NoError(t, err)
	defer proxy.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String() + "/metrics"
	runCtx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serve(runCtx, viaProxy, ns, ln) }()
	defer func() { stop(); require.NoError(t, <-served) }()

	queue := map[string]string{"name": "configmaps"}
	inf := map[string]string{"name": "configmaps in namespace " + ns + ", protobuf", "group": "", "version": "v1", "resource": "configmaps"}
	// The watch opens after the list is in the cache, on the reflector's
	// goroutine: wait for it too, or a quick scrape sees no watch yet.
	before := waitFor(t, url, "the initial list in the cache and the queue, and the watch open", func(m map[string]*dto.MetricFamily) bool {
		cached, _ := value(m, "listwatch_informer_cached_objects", inf)
		done, _ := value(m, "workqueue_work_duration_seconds", queue)
		watches, _ := value(m, "listwatch_informer_watches_total", inf)
		return cached == n && done == n && watches >= 1
	})
	adds, _ := value(before, "workqueue_adds_total", queue)
	assert.Equal(t, float64(n), adds, "one add per object of the initial list")
	depth, _ := value(before, "workqueue_depth", queue)
	assert.Zero(t, depth, "every key was worked off")
	lists, _ := value(before, "listwatch_informer_lists_total", inf)
	assert.Equal(t, 1.0, lists)
	watches, _ := value(before, "listwatch_informer_watches_total", inf)
	assert.GreaterOrEqual(t, watches, 1.0)
	rvBefore, ok := value(before, "informer_store_resource_version", inf)
	require.True(t, ok)
	assert.Positive(t, rvBefore)
	handler := map[string]string{"name": inf["name"], "handler": "enqueue"}
	_, ok = value(before, "listwatch_informer_handler_buffer_depth", handler)
	assert.True(t, ok, "the handler's buffer has a series")
	for _, name := range []string{"informer_queued_items", "informer_processing_latency_seconds",
		"workqueue_queue_duration_seconds", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
		"workqueue_longest_running_processor_seconds", "listwatch_workqueue_gave_up_total"} {
		_, ok := value(before, name, map[string]string{})
		assert.True(t, ok, "%s is exported", name)
	}

	// The outage: new connections refused, the open watch cut. Meanwhile a
	// delete and two writes, then a compaction: the informer's
	// resourceVersion is now too old, so its re-watch is answered 410.
	// The outage lasts until the compaction is done, however long the
	// writes take on a loaded machine: a re-watch that got through before
	// it would see the changes as events, and no 410 would come.
	proxy.Refuse(time.Minute)
	proxy.CutAll()
	require.NoError(t, client.Delete().Namespace(ns).Resource("configmaps").Name("cm-0").Do(ctx).Error())
	require.NoError(t, createConfigMap(ctx, client, ns, "during-1"))
	require.NoError(t, createConfigMap(ctx, client, ns, "during-2"))
	_, err = cp.Compact(ctx)
	require.NoError(t, err)
	proxy.Refuse(0) // the outage ends

	expired := map[string]string{"name": inf["name"], "cause": "expired"}
	// The relist is done when its LIST was answered and the cache took its
	// resourceVersion. The relist counter and the cached count can each
	// get there first (the 410 is counted as the LIST starts), so the
	// wait is for all four.
	waitFor(t, url, "a relist after a 410: a second LIST, its changes in the cache, its resourceVersion moved", func(m map[string]*dto.MetricFamily) bool {
		relists, _ := value(m, "listwatch_informer_relists_total", expired)
		lists, _ := value(m, "listwatch_informer_lists_total", inf)
		cached, _ := value(m, "listwatch_informer_cached_objects", inf)
		rv, _ := value(m, "informer_store_resource_version", inf)
		return relists >= 1 && lists >= 2 && cached == n+1 && rv > rvBefore // one deleted, two created
	})
	after := waitFor(t, url, "the relist's keys worked off", func(m map[string]*dto.MetricFamily) bool {
		adds, _ := value(m, "workqueue_adds_total", queue)
		depth, _ := value(m, "workqueue_depth", queue)
		return adds >= n+3 && depth == 0 // at least the delete and the two creates
	})
	assert.Zero(t, mustValue(t, after, "listwatch_workqueue_gave_up_total", queue), "no reconcile failed")
}

func mustValue(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := value(families, name, labels)
	require.True(t, ok, "%s%v exists", name, labels)
	return v
}
