package metrics_test

import (
	"context"
	"fmt"

	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/workqueue"
)

// A queue's metrics, exported to an in-memory provider: three adds of
// two keys, one of them a duplicate, and one key worked off.
func Example() {
	mem := metrics.NewMemory()
	reg, err := metrics.NewRegistry(mem)
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
	q.Add("shop/web") // already queued: not an add
	key, _ := q.Get(context.Background())
	q.Done(key)
	fmt.Println(mem)
	// Output:
	// listwatch_workqueue_gave_up_total{name="configmaps"} 0
	// workqueue_adds_total{name="configmaps"} 2
	// workqueue_depth{name="configmaps"} 1
	// workqueue_longest_running_processor_seconds{name="configmaps"} 0
	// workqueue_queue_duration_seconds{name="configmaps"} count=1
	// workqueue_retries_total{name="configmaps"} 0
	// workqueue_unfinished_work_seconds{name="configmaps"} 0
	// workqueue_work_duration_seconds{name="configmaps"} count=1
}

// A second queue under a name already taken is refused when it is built:
// the two would write the same series.
func ExampleDuplicateError() {
	reg, _ := metrics.NewRegistry(metrics.NewMemory())
	_, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
	fmt.Println(err)
	_, err = workqueue.NewExportedMetrics(reg, "configmaps", nil)
	fmt.Println(err)
	// Output:
	// <nil>
	// metrics: workqueue "configmaps" is registered twice with one Registry (label values ["configmaps"]): give each its own name
}

// The buckets of a queue's durations, 10ns to 10s. They are computed as
// Prometheus computes them, by repeated multiplication, so they are bit
// for bit client-go's, float rounding included.
func ExampleExponentialBuckets() {
	buckets, err := metrics.ExponentialBuckets(10e-9, 10, 10)
	fmt.Println(buckets, err)
	_, err = metrics.ExponentialBuckets(10e-9, 1, 10) // a factor of 1 makes ten equal bounds
	fmt.Println(err)
	// Output:
	// [1e-08 1e-07 1e-06 9.999999999999999e-06 9.999999999999999e-05 0.001 0.01 0.1 1 10] <nil>
	// metrics: ExponentialBuckets: factor 1 must be a finite number above 1
}
