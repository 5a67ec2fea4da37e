package prometheus

import (
	"strings"
	"testing"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/workqueue"
)

var (
	adds  = metrics.Desc{Name: "adds_total", Help: "Adds.", Labels: []string{"name"}}
	depth = metrics.Desc{Name: "depth", Help: "Depth.", Labels: []string{"name"}}
	waits = metrics.Desc{Name: "wait_seconds", Help: "Waits.", Labels: []string{"name"}, Buckets: []float64{0.1, 1}}
)

func TestNewRefusesANilRegisterer(t *testing.T) {
	_, err := New(nil)
	require.ErrorContains(t, err, "the Registerer is nil")
}

func TestEachKindOfSeriesIsServedAsPrometheusFormatsIt(t *testing.T) {
	reg := prom.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	c, err := p.Counter(adds, []string{"q"})
	require.NoError(t, err)
	g, err := p.Gauge(depth, []string{"q"})
	require.NoError(t, err)
	h, err := p.Histogram(waits, []string{"q"})
	require.NoError(t, err)
	c.Add(2)
	g.Set(5)
	h.Observe(0.5)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP adds_total Adds.
# TYPE adds_total counter
adds_total{name="q"} 2
# HELP depth Depth.
# TYPE depth gauge
depth{name="q"} 5
# HELP wait_seconds Waits.
# TYPE wait_seconds histogram
wait_seconds_bucket{name="q",le="0.1"} 0
wait_seconds_bucket{name="q",le="1"} 1
wait_seconds_bucket{name="q",le="+Inf"} 1
wait_seconds_sum{name="q"} 0.5
wait_seconds_count{name="q"} 1
`)))
}

func TestOneDescAndLabelValuesAskedTwiceWriteOneSeries(t *testing.T) {
	reg := prom.NewRegistry()
	p, err := New(reg)
	require.NoError(t, err)
	for range 2 {
		c, err := p.Counter(adds, []string{"q"})
		require.NoError(t, err)
		c.Add(1)
	}
	other, err := p.Counter(adds, []string{"r"})
	require.NoError(t, err)
	other.Add(1)
	assert.Equal(t, 2, testutil.CollectAndCount(reg, "adds_total"), "two series: q and r")
	vec := p.families["adds_total"].vec.(*prom.CounterVec)
	assert.Equal(t, 2.0, testutil.ToFloat64(vec.WithLabelValues("q")))
}

func TestANameAskedForInAnotherShapeIsAnErrorNamingBoth(t *testing.T) {
	p, err := New(prom.NewRegistry())
	require.NoError(t, err)
	_, err = p.Counter(adds, []string{"q"})
	require.NoError(t, err)

	_, err = p.Gauge(metrics.Desc{Name: "adds_total", Help: "Adds.", Labels: []string{"name"}}, []string{"q"})
	require.ErrorContains(t, err, `adds_total was made as a counter`)
	require.ErrorContains(t, err, `now asked for as a gauge`)

	_, err = p.Counter(metrics.Desc{Name: "adds_total", Help: "Adds.", Labels: []string{"queue"}}, []string{"q"})
	require.ErrorContains(t, err, `labels ["name"]`)
	require.ErrorContains(t, err, `labels ["queue"]`)

	_, err = p.Counter(metrics.Desc{Name: "adds_total", Help: "Other adds.", Labels: []string{"name"}}, []string{"q"})
	require.ErrorContains(t, err, `help "Adds."`)
	require.ErrorContains(t, err, `help "Other adds."`)

	_, err = p.Histogram(waits, []string{"q"})
	require.NoError(t, err)
	_, err = p.Histogram(metrics.Desc{Name: "wait_seconds", Help: "Waits.", Labels: []string{"name"}, Buckets: []float64{1}}, []string{"q"})
	require.ErrorContains(t, err, "buckets [1]")
}

func TestWrongLabelValuesAreAnError(t *testing.T) {
	p, err := New(prom.NewRegistry())
	require.NoError(t, err)
	_, err = p.Counter(adds, []string{"q", "extra"})
	require.Error(t, err, "two values for one label name")
}

func TestTwoProvidersOverOneRegistererShareAFamily(t *testing.T) {
	reg := prom.NewRegistry()
	first, err := New(reg)
	require.NoError(t, err)
	second, err := New(reg)
	require.NoError(t, err)
	a, err := first.Counter(adds, []string{"q"})
	require.NoError(t, err)
	b, err := second.Counter(adds, []string{"q"})
	require.NoError(t, err)
	a.Add(1)
	b.Add(1)
	vec := first.families["adds_total"].vec.(*prom.CounterVec)
	assert.Equal(t, 2.0, testutil.ToFloat64(vec.WithLabelValues("q")), "one series, written through both")
}

func TestAFamilyRegisteredByOtherCodeInAnotherShapeIsAnError(t *testing.T) {
	reg := prom.NewRegistry()
	require.NoError(t, reg.Register(prom.NewCounterVec(prom.CounterOpts{Name: "adds_total", Help: "Someone else's."}, []string{"name"})))
	p, err := New(reg)
	require.NoError(t, err)
	_, err = p.Counter(adds, []string{"q"})
	require.ErrorContains(t, err, "registering counter adds_total")
}

// The library's own metrics through the adapter: a queue's exported
// metrics land in the Prometheus registry under client-go's names.
func TestAWorkqueuesMetricsReachTheRegistry(t *testing.T) {
	promReg := prom.NewRegistry()
	p, err := New(promReg)
	require.NoError(t, err)
	reg, err := metrics.NewRegistry(p)
	require.NoError(t, err)
	qm, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
	require.NoError(t, err)
	q := workqueue.New(workqueue.Options[string]{Trace: qm.Hook()})
	q.Add("shop/web")
	q.Add("shop/db")
	require.NoError(t, testutil.GatherAndCompare(promReg, strings.NewReader(`
# HELP workqueue_adds_total Times a key entered the queue; adds of a key already queued do not count.
# TYPE workqueue_adds_total counter
workqueue_adds_total{name="configmaps"} 2
# HELP workqueue_depth Keys queued and ready for a worker.
# TYPE workqueue_depth gauge
workqueue_depth{name="configmaps"} 2
`), "workqueue_adds_total", "workqueue_depth"))
}
