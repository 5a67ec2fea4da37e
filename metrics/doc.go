// Package metrics is the small interface through which informers and
// queues export the metrics people already scrape: client-go's
// workqueue_* and informer_* names, its
// rest_client_rate_limiter_duration_seconds (by host), and a few of this
// library's own (prefixed listwatch_). It holds no metrics system: an adapter for one
// (Prometheus, OpenTelemetry) implements Provider in a few dozen lines,
// in your module, so this module never imports one.
//
// # Where it sits
//
// Beside the data flow, reading it: every stage already tells what it does
// through its trace hook, and the queue's and the informer's metrics are
// computed from those events and nothing else, so a number and the trace
// cannot disagree. The read-your-writes guard's, the sharder's and the
// client's rate-limiter wait are counted where they happen: no trace
// event tells them.
//
//	stage ──TraceEvent──▶ workqueue.ExportedMetrics / sharedinformer.ExportedMetrics
//	      ──Add / Set / Observe──▶ Provider's series ──▶ your /metrics endpoint
//
// # Usage
//
//	reg, err := metrics.NewRegistry(myPrometheusAdapter)
//	qm, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
//	q := workqueue.New(workqueue.Options[string]{Trace: qm.Hook()})
//	go qm.Run(ctx) // the two gauges of work in progress, every 500ms
//
//	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Metrics: reg})
//
// The Prometheus adapter is a module of its own,
// github.com/listwatch/informer/metrics/prometheus; examples/06-metrics
// serves /metrics through it, and docs/15-metrics.md says what each
// metric means and which alert to write on it.
//
// # Rules
//
//   - Labels are bounded: a queue's or an informer's name, its resource,
//     a relist's cause, a handler's name, a client's host, a sharder's
//     ring and a takeover's result. Never an object's key, namespace
//     or resourceVersion, each of which would make a series per object.
//   - One identity, one source: two queues with one name, or two informers
//     with one name and resource, registered with one Registry are an
//     error (a *DuplicateError) when the second is built, since they would
//     overwrite each other's series.
//   - No provider, no cost: a nil *Registry gives nil metrics whose trace
//     hook is nil, and a stage with a nil hook builds no event.
package metrics
