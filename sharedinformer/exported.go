package sharedinformer

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/reflector"
)

// informerLabels are the labels of every informer metric, as client-go's
// informer metrics have them. Ours add one more where they need it.
var informerLabels = []string{"name", "group", "version", "resource"}

// The informer metrics. The first three are client-go's
// (k8s.io/component-base/metrics/prometheus/clientgo/fifo), with its names,
// labels and buckets, but informer_queued_items counts queued keys where
// client-go's counts queued events (its RealFIFO keeps one per event);
// the rest are this library's own, prefixed listwatch_.
var (
	descQueuedItems = metrics.Desc{Name: "informer_queued_items", Labels: informerLabels,
		Help: "Keys queued in the informer's DeltaFIFO, waiting to reach the cache and the handlers."}
	descProcessingLatency = metrics.Desc{Name: "informer_processing_latency_seconds", Labels: informerLabels,
		Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		Help:    "Seconds from popping a key's deltas to having applied them to the cache and handed them to every handler's buffer."}
	descStoreRV = metrics.Desc{Name: "informer_store_resource_version", Labels: informerLabels,
		Help: "The resourceVersion the cache has applied, its 15 least significant digits."}
	descLists = metrics.Desc{Name: "listwatch_informer_lists_total", Labels: informerLabels,
		Help: "LIST requests answered, one per page (listwatch/informer's own metric)."}
	descWatches = metrics.Desc{Name: "listwatch_informer_watches_total", Labels: informerLabels,
		Help: "WATCH requests opened, streaming lists included (listwatch/informer's own metric)."}
	descRelists = metrics.Desc{Name: "listwatch_informer_relists_total", Labels: append(informerLabels[:4:4], "cause"),
		Help: "Lists after the first, by cause: expired (410 Gone), failed, too-large, ... (listwatch/informer's own metric)."}
	descCached = metrics.Desc{Name: "listwatch_informer_cached_objects", Labels: informerLabels,
		Help: "Objects in the informer's cache (listwatch/informer's own metric)."}
	descLag = metrics.Desc{Name: "listwatch_informer_applied_lag_revisions", Labels: informerLabels,
		Help: "How many resourceVersions (etcd revisions) the cache's applied resourceVersion trails the newest one the API server has sent the informer, bookmarks included: 0 once it has applied all it received (listwatch/informer's own metric)."}
	descNotServed = metrics.Desc{Name: "listwatch_informer_resource_not_served", Labels: informerLabels,
		Help: "1 while the API server's discovery no longer lists the informer's resource in the informer's version (its CRD was deleted, or serves other versions now) and the informer waits with no LIST or WATCH, asking only discovery; 0 otherwise (listwatch/informer's own metric)."}
	descBufferDepth = metrics.Desc{Name: "listwatch_informer_handler_buffer_depth", Labels: append(informerLabels[:4:4], "handler"),
		Help: "Notifications waiting for one handler, as of its latest delivery (listwatch/informer's own metric)."}
)

// relistCauses are the values of the relists counter's cause label; all
// are made when the metrics are, so a rate over them starts from zero.
var relistCauses = []string{reflector.CauseExpired, reflector.CauseTooLarge, reflector.CauseWentBack,
	reflector.CauseFailed, reflector.CauseStoreRefused, reflector.CauseNoRV, reflector.CauseServedAgain, reflector.CauseOtherKind}

// ExportedMetrics turns one informer's trace events into metrics on a
// metrics.Provider: client-go's informer_queued_items,
// informer_processing_latency_seconds and informer_store_resource_version,
// and this library's listwatch_informer_* (lists, watches, relists by
// cause, cached objects, each handler's buffer depth, how far the cache
// trails what the informer received, whether its resource is no longer
// served). Like every metric
// here, they are computed from trace events and nothing else.
//
// A Factory given FactoryOptions.Metrics makes one for each informer. For
// an informer made with New, make it yourself and install its Hook as
// Options.Trace (next to a printer with informer.Tee).
//
// A nil *ExportedMetrics is valid and exports nothing: its Hook is nil.
//
// It keeps the text of each key queued in the DeltaFIFO: memory in
// proportion to the keys waiting there.
type ExportedMetrics struct {
	queued, storeRV, cached metrics.Gauge
	lag, notServed          metrics.Gauge
	latency                 metrics.Histogram
	lists, watches          metrics.Counter
	relists                 map[string]metrics.Counter // by cause; fixed at construction
	reg                     *metrics.Registry
	labels                  []string // name, group, version, resource

	// mu guards the fields below. queuedKeys holds the keys queued in the
	// DeltaFIFO: a key is in it from its KindQueued event to its
	// KindPopped event. poppedAt is the Time of the latest KindPopped
	// event: Pop runs one process function at a time, so KindProcessed
	// follows its own KindPopped. handlers holds each handler's buffer
	// gauge, made at the handler's first delivery.
	mu         sync.Mutex
	queuedKeys map[string]struct{}
	poppedAt   time.Time
	cachedN    int
	handlers   map[string]metrics.Gauge
	// received and applied are the newest resourceVersion the reflector
	// got (an event's, a list's or a bookmark's) and the one the cache
	// has applied, as numbers; 0 until known.
	received, applied uint64
}

// NewExportedMetrics registers an informer with reg under name and gvr,
// and makes its series. name is the informer's Name (a Factory's
// informers are named after their resource and scope, such as "configmaps
// in namespace shop, labels app=web"). It returns nil, nil for a nil reg:
// no metrics. It fails for an empty name or resource, for a name and
// resource reg already has (a *metrics.DuplicateError), or for a series
// the provider refuses.
func NewExportedMetrics(reg *metrics.Registry, name string, gvr schema.GroupVersionResource) (*ExportedMetrics, error) {
	if reg == nil {
		return nil, nil
	}
	if gvr.Resource == "" {
		return nil, fmt.Errorf("sharedinformer: NewExportedMetrics: informer %q has no resource", name)
	}
	labels := []string{name, gvr.Group, gvr.Version, gvr.Resource}
	if err := reg.Register("informer", labels...); err != nil {
		return nil, err
	}
	m := &ExportedMetrics{
		reg: reg, labels: labels, relists: map[string]metrics.Counter{},
		queuedKeys: map[string]struct{}{}, handlers: map[string]metrics.Gauge{},
	}
	var err error
	gauge := func(d metrics.Desc) metrics.Gauge {
		var g metrics.Gauge
		if err == nil {
			g, err = reg.Gauge(d, labels)
		}
		return g
	}
	counter := func(d metrics.Desc, values []string) metrics.Counter {
		var c metrics.Counter
		if err == nil {
			c, err = reg.Counter(d, values)
		}
		return c
	}
	m.queued, m.storeRV, m.cached, m.lag = gauge(descQueuedItems), gauge(descStoreRV), gauge(descCached), gauge(descLag)
	m.notServed = gauge(descNotServed)
	m.lists, m.watches = counter(descLists, labels), counter(descWatches, labels)
	for _, cause := range relistCauses {
		m.relists[cause] = counter(descRelists, append(labels[:4:4], cause))
	}
	if err == nil {
		m.latency, err = reg.Histogram(descProcessingLatency, labels)
	}
	if err != nil {
		reg.Unregister("informer", labels...) // nothing uses the name: free it
		return nil, err
	}
	return m, nil
}

// unregister gives the informer's identity back to its Registry, for an
// informer whose construction failed after its metrics were made, or that
// has stopped. Its gauges go to zero first: a stopped informer caches,
// queues and waits for nothing, and a series the Provider keeps exporting
// must not say otherwise. (Counters keep their totals; an informer that
// takes the name again counts on from them.)
func (m *ExportedMetrics) unregister() {
	if m == nil {
		return
	}
	m.mu.Lock()
	for _, g := range []metrics.Gauge{m.queued, m.storeRV, m.cached, m.lag, m.notServed} {
		g.Set(0)
	}
	for _, g := range m.handlers {
		if g != nil {
			g.Set(0)
		}
	}
	m.mu.Unlock()
	m.reg.Unregister("informer", m.labels...)
}

// Hook returns the trace hook to install as the informer's Options.Trace:
// nil for a nil m.
func (m *ExportedMetrics) Hook() informer.TraceHook {
	if m == nil {
		return nil
	}
	return m.observe
}

// observe updates the metrics from one event of any stage.
func (m *ExportedMetrics) observe(e informer.TraceEvent) {
	switch e.Stage {
	case informer.StageReflector:
		switch e.Kind {
		case reflector.KindList:
			m.lists.Add(1)
		case reflector.KindWatch:
			m.watches.Add(1)
		case reflector.KindRelist:
			if relists, ok := m.relists[e.Reason]; ok { // always: the reflector's causes are a closed set
				relists.Add(1)
			}
		case reflector.KindResourceVersion:
			m.setLag(e.ResourceVersion, "")
		case reflector.KindNotServed, reflector.KindVersionNotServed:
			m.notServed.Set(1)
		case reflector.KindServedAgain:
			m.notServed.Set(0)
		}
	case informer.StageFIFO:
		m.observeFIFO(e)
	case informer.StageIndexer:
		m.observeIndexer(e)
	case informer.StageListener:
		if e.Kind == KindDelivered {
			m.observeDelivery(e)
		}
	}
}

func (m *ExportedMetrics) observeFIFO(e informer.TraceEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch e.Kind {
	case deltafifo.KindQueued, deltafifo.KindRequeued:
		m.queuedKeys[e.Key] = struct{}{}
	case deltafifo.KindPopped:
		delete(m.queuedKeys, e.Key)
		m.poppedAt = e.Time
	case deltafifo.KindProcessed:
		m.latency.Observe(e.Time.Sub(m.poppedAt).Seconds())
		m.appliedLocked(e.ResourceVersion)
		return
	case deltafifo.KindBookmarked, deltafifo.KindReplaced:
		// Nothing queued before it: applied at once. (A list handed over in
		// parts often ends so: its parts were popped while it was read.)
		if len(m.queuedKeys) == 0 {
			m.appliedLocked(e.ResourceVersion)
		}
		return
	default:
		return
	}
	m.queued.Set(float64(len(m.queuedKeys)))
}

// appliedLocked records that the cache has applied resourceVersion rv:
// the store's resourceVersion gauge and the lag. The caller holds mu.
func (m *ExportedMetrics) appliedLocked(rv string) {
	if v, ok := rvForMetrics(rv); ok {
		m.storeRV.Set(v)
	}
	m.setLagLocked("", rv)
}

// setLag records a newer received or applied resourceVersion ("" for
// neither) and sets the lag gauge from them. Opaque resourceVersions are
// not measured.
func (m *ExportedMetrics) setLag(received, applied string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setLagLocked(received, applied)
}

func (m *ExportedMetrics) setLagLocked(received, applied string) {
	if n, err := strconv.ParseUint(received, 10, 64); err == nil {
		m.received = max(m.received, n)
	}
	if n, err := strconv.ParseUint(applied, 10, 64); err == nil {
		m.applied = max(m.applied, n)
	}
	if m.received > 0 && m.applied > 0 {
		m.lag.Set(float64(m.received - min(m.applied, m.received)))
	}
}

// observeIndexer counts the cache's objects. The informer writes its
// cache with Add for a key it does not hold and Update for one it does,
// and never with Replace, so an "added" store is one object more.
func (m *ExportedMetrics) observeIndexer(e informer.TraceEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case e.Kind == indexer.KindStored && e.Detail == "added":
		m.cachedN++
	case e.Kind == indexer.KindDeleted:
		m.cachedN--
	default:
		return
	}
	m.cached.Set(float64(m.cachedN))
}

// observeDelivery sets the delivering handler's buffer gauge, making it
// at the handler's first delivery. A provider that refuses it is logged
// once per handler; the handler then goes unmeasured.
func (m *ExportedMetrics) observeDelivery(e informer.TraceEvent) {
	handler, waiting, ok := parseDelivered(e.Detail)
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g, seen := m.handlers[handler]
	if !seen {
		var err error
		g, err = m.reg.Gauge(descBufferDepth, append(m.labels[:4:4], handler))
		if err != nil {
			slog.Default().Warn("sharedinformer: no buffer depth metric for a handler", "informer", m.labels[0], "handler", handler, "err", err)
		}
		m.handlers[handler] = g // nil after an error: not asked again
	}
	if g != nil {
		g.Set(float64(waiting))
	}
}

// parseDelivered reads the handler's name and the notifications still
// waiting for it from a KindDelivered Detail, which the listener formats
// as "update to audit-log, 3 waiting" (see listener.deliver).
func parseDelivered(detail string) (handler string, waiting int, ok bool) {
	rest, count, found := cutLast(detail, ", ")
	if !found {
		return "", 0, false
	}
	count, found = strings.CutSuffix(count, " waiting")
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		return "", 0, false
	}
	_, handler, found = strings.Cut(rest, " to ")
	return handler, n, found
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// rvForMetrics turns a resourceVersion into a gauge value as client-go
// does: its 15 least significant digits, which a float64 holds exactly.
// A resourceVersion is opaque to clients; one that is not a number (from
// a server other than kube-apiserver on etcd) is not exported.
func rvForMetrics(rv string) (float64, bool) {
	if rv == "" {
		return 0, false
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(n), true
}
