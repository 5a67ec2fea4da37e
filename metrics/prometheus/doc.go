// Package prometheus exports the library's metrics to a Prometheus
// registry: a [metrics.Provider] over [prometheus.Registerer], in a module
// of its own, so that the library's module never imports the Prometheus
// client and yours imports it in one line:
//
//	go get github.com/listwatch/informer/metrics/prometheus
//
// # Where it sits
//
// At the end of the metrics path. Every stage of an informer or a queue
// tells what it does through its trace hook; workqueue.ExportedMetrics and
// sharedinformer.ExportedMetrics turn those events into series, which they
// ask a metrics.Registry for; the Registry asks its Provider, and this
// package's Provider makes each series a child of a Prometheus vector,
// which your /metrics endpoint serves.
//
//	stage ──TraceEvent──▶ ExportedMetrics ──▶ metrics.Registry ──▶ Provider
//	      ──▶ prometheus.Registry ──▶ promhttp.Handler ──▶ /metrics
//
// # Usage
//
//	promReg := prometheus.NewRegistry() // or prometheus.DefaultRegisterer
//	provider, err := informerprom.New(promReg)
//	reg, err := metrics.NewRegistry(provider)
//	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{Metrics: reg})
//	qm, err := workqueue.NewExportedMetrics(reg, "configmaps", nil)
//	http.Handle("/metrics", promhttp.HandlerFor(promReg, promhttp.HandlerOpts{}))
//
// (informerprom is this package, imported under a name of your choice,
// since the Prometheus client's package is called prometheus too.)
// docs/15-metrics.md says what each metric means and which alert to write
// on it; examples/06-metrics serves them from a running informer.
//
// # Invariants
//
//   - One metric family, one vector: the first Desc of a name makes and
//     registers a vector; later requests for that name get its children
//     (TestOneDescAndLabelValuesAskedTwiceWriteOneSeries).
//   - A name asked for again as another kind (a gauge where a counter was
//     made) or with another help, labels or buckets is an error naming
//     both, never a series that silently records under the first shape
//     (TestANameAskedForInAnotherShapeIsAnErrorNamingBoth).
//   - A family another Provider already registered with the same
//     Registerer, with the same kind, help and labels, is shared, not
//     refused: two Providers over one registry export together. (Prometheus
//     does not compare buckets; the library uses one set per name.) A
//     family of another shape is refused. Proved by
//     TestTwoProvidersOverOneRegistererShareAFamily and
//     TestAFamilyRegisteredByOtherCodeInAnotherShapeIsAnError.
//   - Safe for concurrent use, as metrics.Provider requires
//     (TestAProviderIsSafeForConcurrentUse).
package prometheus
