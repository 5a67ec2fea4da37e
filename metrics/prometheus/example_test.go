package prometheus_test

import (
	"context"
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/informer/metrics"
	informerprom "github.com/listwatch/informer/metrics/prometheus"
	"github.com/listwatch/informer/workqueue"
)

// A queue's metrics in a Prometheus registry: the adapter made the
// families, the queue's trace hook writes them, and Gather reads them as
// a /metrics endpoint would.
func Example() {
	promReg := prom.NewRegistry()
	provider, err := informerprom.New(promReg)
	if err != nil {
		panic(err)
	}
	reg, err := metrics.NewRegistry(provider)
	if err != nil {
		panic(err)
	}
	qm, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
	if err != nil {
		panic(err)
	}
	q := workqueue.New(workqueue.Options[string]{Trace: qm.Hook()})
	q.Add("shop/web")
	q.Add("shop/db")
	key, _ := q.Get(context.Background())
	q.Done(key)

	families, err := promReg.Gather()
	if err != nil {
		panic(err)
	}
	for _, f := range families {
		m := f.GetMetric()[0]
		switch f.GetType().String() {
		case "COUNTER":
			fmt.Println(f.GetName(), m.GetCounter().GetValue())
		case "GAUGE":
			fmt.Println(f.GetName(), m.GetGauge().GetValue())
		case "HISTOGRAM":
			fmt.Println(f.GetName(), "count", m.GetHistogram().GetSampleCount())
		}
	}
	// Output:
	// listwatch_workqueue_gave_up_total 0
	// workqueue_adds_total 2
	// workqueue_depth 1
	// workqueue_longest_running_processor_seconds 0
	// workqueue_queue_duration_seconds count 1
	// workqueue_retries_total 0
	// workqueue_unfinished_work_seconds 0
	// workqueue_work_duration_seconds count 1
}
