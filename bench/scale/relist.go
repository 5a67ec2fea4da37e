package scale

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/deltafifo"
	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// Relist is the workload of the relist rows: from the library's first
// request for the list after the injected 410 (so a backoff before it is
// not counted) until every listed object has been applied to the cache, each library with its
// default list mode and encoding. client-go hands every relisted object
// to its handlers, so a handler counts them; ours hands on only those that
// changed (an unchanged one is a resync, for handlers that asked for one),
// so its DeltaFIFO's "processed" trace events count them instead.
const Relist = "relist"

// oursExpiringLW is our REST ListerWatcher with expirable watches. It
// reads in parts, as the one InformerFor builds does.
type oursExpiringLW[T informer.Object] struct {
	lw *reflector.RESTListerWatcher[T]
	x  *expirer
}

func (l oursExpiringLW[T]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return l.x.wrapWatch(l.lw.Watch)(ctx, opts)
}

func (l oursExpiringLW[T]) List(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
	l.x.noteRequest(opts, true)
	return l.lw.List(ctx, opts)
}

func (l oursExpiringLW[T]) ListInParts(ctx context.Context, opts metav1.ListOptions, part func([]T) error) (metav1.ListMeta, error) {
	l.x.noteRequest(opts, true)
	return l.lw.ListInParts(ctx, opts, part)
}

// The kinds of our informer a relist row can measure, besides Ours (a Go
// type read as protobuf, as InformerFor builds a built-in's): the same
// ConfigMaps read as JSON, as unstructured objects, as metadata only (in
// protobuf, as InformerFor reads it; JSON before 4fa9cda), and through a
// streaming list. Each reads in parts, as its kind does.
const (
	OursJSON         = "ours-json"
	OursUnstructured = "ours-unstructured"
	OursMetadata     = "ours-metadata"
	OursStreamed     = "ours-streamed"
)

// RelistKinds are the libraries and kinds Relists takes for ConfigMaps.
var RelistKinds = []string{Ours, OursJSON, OursUnstructured, OursMetadata, OursStreamed, ClientGo}

// RelistKindsOf is the libraries and kinds Relists takes for shape:
// RelistKinds for ConfigMaps, WidgetRelistKinds for Widgets, nil for a
// shape it cannot relist.
func RelistKindsOf(shape string) []string {
	switch shape {
	case ConfigMaps:
		return RelistKinds
	case Widgets:
		return WidgetRelistKinds
	}
	return nil
}

// buildRelisting builds lib's informer of the objects of shape in ns
// (lib is one of RelistKindsOf(shape)), with the factory's tuning and
// expirable watches. seen is called once for every object applied to
// the cache.
func buildRelisting(ctx context.Context, cfg *rest.Config, shape, lib, ns string, x *expirer, seen func()) (running, error) {
	switch shape {
	case ConfigMaps:
		return buildRelistingConfigMaps(ctx, cfg, lib, ns, x, seen)
	case Widgets:
		return buildRelistingWidgets(ctx, cfg, lib, ns, x, seen)
	}
	return running{}, fmt.Errorf("scale: no relists of %q (want %q or %q)", shape, ConfigMaps, Widgets)
}

// processedBy is the trace hook that calls seen once for every object
// our informer applies to its cache: ours hands on to its handlers only
// the relisted objects that changed, so a handler cannot count them.
func processedBy(seen func()) informer.TraceHook {
	return func(e informer.TraceEvent) {
		if e.Stage == informer.StageFIFO && e.Kind == deltafifo.KindProcessed {
			seen()
		}
	}
}

// buildRelistingConfigMaps is buildRelisting's ConfigMap informer (lib
// is one of RelistKinds).
func buildRelistingConfigMaps(ctx context.Context, cfg *rest.Config, lib, ns string, x *expirer, seen func()) (running, error) {
	processed := processedBy(seen)
	tuning := sharedinformer.WithFactoryDefaults(reflector.Tuning{})
	src := reflector.Source{Resource: gvr(ConfigMaps), Namespace: ns}
	switch lib {
	case Ours, OursJSON, OursStreamed:
		src.Protobuf = lib != OursJSON && reflector.ProtobufCapable[*corev1.ConfigMap]()
		if lib == OursStreamed {
			tuning.StreamingList = true
		}
		lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, src)
		if err != nil {
			return running{}, err
		}
		return buildOursFrom[*corev1.ConfigMap](ctx, oursExpiringLW[*corev1.ConfigMap]{lw: lw, x: x}, tuning, processed, nil)
	case OursUnstructured:
		lw, err := reflector.NewUnstructuredListerWatcher(cfg, src)
		if err != nil {
			return running{}, err
		}
		return buildOursFrom[*unstructured.Unstructured](ctx, oursExpiringLW[*unstructured.Unstructured]{lw: lw, x: x}, tuning, processed, nil)
	case OursMetadata:
		src.Protobuf = true // as InformerFor reads metadata, unless WithJSON
		lw, err := reflector.NewMetadataListerWatcher(cfg, src)
		if err != nil {
			return running{}, err
		}
		return buildOursFrom[*metav1.PartialObjectMetadata](ctx, oursExpiringLW[*metav1.PartialObjectMetadata]{lw: lw, x: x}, tuning, processed, nil)
	case ClientGo:
	default:
		return running{}, fmt.Errorf("scale: no relist kind %q (have %v)", lib, RelistKinds)
	}
	// client-go's generated clients read built-in types as protobuf.
	client, err := coreClient(cfg, true)
	if err != nil {
		return running{}, err
	}
	lw := cache.NewListWatchFromClient(client, ConfigMaps, ns, fields.Everything())
	x.wrapListWatch(lw)
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return clientGoRunning(ctx, inf, seen)
}

// RelistSample is one relist: its duration, this process's CPU-seconds
// meanwhile, and the peak live heap during it over the live heap before
// it.
type RelistSample struct {
	Seconds, CPU, PeakOverSteady float64
}

// Relists syncs lib's informer (one of RelistKindsOf(shape)) of the n
// objects of shape (ConfigMaps or Widgets) in ns ("": every namespace),
// then relists it times times in a row, each after an injected 410,
// returning each relist's sample and the live heap after each relist
// over the live heap after the sync.
func Relists(ctx context.Context, cfg *rest.Config, shape, lib, ns string, n, times int) ([]RelistSample, []float64, error) {
	return relistRuns(ctx, cfg, shape, lib, ns, n, times)
}

func relistRuns(ctx context.Context, cfg *rest.Config, shape, lib, ns string, n, times int) ([]RelistSample, []float64, error) {
	var seen atomic.Int64
	x := &expirer{}
	r, err := buildRelisting(ctx, cfg, shape, lib, ns, x, func() { seen.Add(1) })
	if err != nil {
		return nil, nil, err
	}
	r.start()
	defer r.stop()
	if err := r.waitSynced(ctx, n); err != nil {
		return nil, nil, err
	}
	if err := waitSeen(ctx, &seen, int64(n)); err != nil {
		return nil, nil, err
	}
	synced := LiveHeap()
	var samples []RelistSample
	var growth []float64
	for i := range times {
		steady := LiveHeap()
		cpu, err := CPUSeconds(os.Getpid())
		if err != nil {
			return nil, nil, err
		}
		sampler := StartPeakSampler(2 * time.Millisecond)
		x.expire()
		err = waitSeen(ctx, &seen, int64(n)*int64(i+2))
		end := time.Now()
		peak := sampler.Stop()
		if err != nil {
			return nil, nil, fmt.Errorf("%s, relist %d of %d at %d: %w", lib, i+1, times, n, err)
		}
		start, ok := x.relistStart()
		if !ok {
			return nil, nil, fmt.Errorf("%s, relist %d of %d at %d: the handler saw every object again, but no list was asked for", lib, i+1, times, n)
		}
		elapsed := end.Sub(start).Seconds()
		cpuAfter, err := CPUSeconds(os.Getpid())
		if err != nil {
			return nil, nil, err
		}
		samples = append(samples, RelistSample{Seconds: elapsed, CPU: cpuAfter - cpu, PeakOverSteady: peak / steady})
		growth = append(growth, LiveHeap()/synced)
	}
	return samples, growth, nil
}

// waitSeen waits until the handler has been called want times. It polls
// every millisecond: a relist takes from tens of milliseconds to seconds.
func waitSeen(ctx context.Context, seen *atomic.Int64, want int64) error {
	for seen.Load() < want {
		select {
		case <-ctx.Done():
			return fmt.Errorf("scale: the handler saw %d of %d objects: %w", seen.Load(), want, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}
