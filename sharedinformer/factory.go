package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/internal/restclient"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/reflector"
)

// FactoryOptions configure a Factory and the informers it makes.
type FactoryOptions struct {
	// Scheme knows the Go types of typed informers (corev1.AddToScheme for
	// *corev1.Pod, ...). Not needed for *unstructured.Unstructured or
	// *metav1.PartialObjectMetadata. Default: none.
	Scheme *runtime.Scheme
	// Mapper maps a kind to its resource. Default: one backed by the API
	// server's discovery, cached in memory and refreshed on a miss (so a
	// CRD installed later is found); a refresh keeps what it knew of
	// another group whose discovery fails then. The factory's InformerFor
	// calls use it one at a time, each waiting its turn within its own
	// context; a caller's Mapper shared with code outside the factory may
	// still make them wait on its own locks.
	Mapper meta.RESTMapperWithContext
	// SyncTimeout bounds Factory.WaitForCacheSync when its ctx has no
	// earlier deadline. Default: 2 minutes (controller-runtime's too).
	SyncTimeout time.Duration
	// Buffer, Trace, OnError and Logger are given to every informer; see
	// Options for their defaults.
	Buffer  BufferPolicy
	Trace   informer.TraceHook
	OnError func(error)
	Logger  *slog.Logger
	// Metrics, if set, exports every informer's metrics (see
	// ExportedMetrics), labelled with the informer's name and resource.
	// The name says scope, the encoding asked for and mode ("configmaps in
	// namespace shop, protobuf", "... (metadata only)", "widgets.example.com,
	// offers CBOR (unstructured)"), so each informer of a
	// factory has its own; only two Go types read from one resource in
	// one scope would share a name, and the second InformerFor is then an
	// error (a *metrics.DuplicateError). Default: nil, no metrics.
	Metrics *metrics.Registry
}

// Factory hands out shared informers: one per Go type and scope (resource,
// namespace, label selector, field selector, encoding), however many
// callers ask. Controllers in one process that need the same collection
// then share one LIST, one WATCH and one cache. Equivalent spellings of a
// selector are one scope: "a=1,b=2" and "b=2, a=1", "app=web", "app==web"
// and "app in (web)" (reflector.Source.Canonical).
//
// Scope is part of the identity (pitfall 7): an informer for the Pods of
// namespace "a" and one for all Pods are two informers with two caches,
// and the Pods of "a" are held twice. Ask for the same scope to share.
//
// Use: ask for informers with InformerFor, register handlers, then Start
// and WaitForCacheSync; when ctx ends, Wait for them to stop.
type Factory struct {
	cfg       *rest.Config // the caller's, copied, with the shared rate limiter (withClientLimits)
	opts      FactoryOptions
	mapper    meta.RESTMapperWithContext
	discovery discovery.CachedDiscoveryInterfaceWithContext // nil with a caller's Mapper
	// forget resets mapper, so it asks discovery again; ours keeps, of
	// the groups not doubted, those whose discovery fails then
	// (keepingMapper); a caller's resettable Mapper forgets all, and one
	// that cannot be reset keeps what it knows. Called with the lookup
	// turn held.
	forget  func(ctx context.Context, doubted ...string)
	lookups lookupTurn       // held by whichever InformerFor uses mapper (and discovery) now
	served  *servedResources // every informer's Served: is its resource still served?
	// stale marks the groups in which a served check found a resource
	// not served in its version: the mapper may still hold it.
	stale staleGroups

	mu sync.Mutex
	// informers holds the informers handed out and not yet released by
	// their last holder: *Informer[T] for many T, the one place this
	// module stores values of several types in one map. Guarded by mu.
	informers map[factoryKey]*held
	// stopping holds the informers released by their last holder that
	// have not stopped yet; InformerFor waits for one before making its
	// successor, which takes its metrics' name (on an informer's own
	// goroutine it returns a *StillStoppingError instead). Guarded by mu.
	stopping map[factoryKey]*held
	// started says Start has started an informer, released or retired
	// since or not. retiredSome says an informer was retired
	// (retireEndedLocked) since Start last started one. Guarded by mu.
	started, retiredSome bool
	running              sync.WaitGroup // the Run goroutines
}

// factoryKey identifies one shared informer: its Go type and its
// canonical source (selectors in one spelling).
type factoryKey struct {
	goType reflect.Type
	source reflector.Source
}

// runnable is what the factory needs of an *Informer[T], whatever T is.
type runnable interface {
	Syncer
	reporter
	Run(ctx context.Context) error
	Name() string
	// afterRun is called once Run has returned.
	afterRun()
	// retire records that f took the informer out of its map after the
	// ctx given to Start ended; retiredBy reports that factory (nil if
	// none did).
	retire(f *Factory)
	retiredBy() *Factory
}

// NewFactory returns a Factory whose informers connect with cfg. It makes
// no request: discovery is asked on the first InformerFor that needs it.
//
// cfg is copied, not modified, and every client the factory makes shares
// one client-side rate limiter: cfg's QPS and Burst, where zero means
// [DefaultQPS] (50) and [DefaultBurst] (100) rather than client-go's 5 and
// 10 (cfg.RateLimiter, if set, instead). Requests throttled in the client,
// before the API server sees them, are otherwise silent, so the factory
// reports them: with opts.Metrics, every request's wait goes into
// client-go's histogram rest_client_rate_limiter_duration_seconds
// (labelled by host); and when requests were held back for a tenth of
// 10 s or more (at least one waiting for a second in all), it logs a
// warning with Logger, at most one every 10 s.
func NewFactory(cfg *rest.Config, opts FactoryOptions) (*Factory, error) {
	if cfg == nil {
		return nil, errors.New("sharedinformer: NewFactory: the rest.Config is nil")
	}
	if opts.SyncTimeout < 0 {
		return nil, fmt.Errorf("sharedinformer: NewFactory: SyncTimeout %v is negative", opts.SyncTimeout)
	}
	if opts.SyncTimeout == 0 {
		opts.SyncTimeout = 2 * time.Minute
	}
	var waits metrics.Histogram
	if opts.Metrics != nil {
		h, err := opts.Metrics.Histogram(descRateLimiterWait, []string{hostOf(cfg.Host)})
		if err != nil {
			return nil, fmt.Errorf("sharedinformer: NewFactory: %w", err)
		}
		waits = h
	}
	cfg = withClientLimits(cfg, func() *slog.Logger {
		if opts.Logger != nil {
			return opts.Logger
		}
		return slog.Default()
	}, waits)
	f := &Factory{cfg: cfg, opts: opts, mapper: opts.Mapper, informers: map[factoryKey]*held{}, stopping: map[factoryKey]*held{}, lookups: newLookupTurn()}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("sharedinformer: NewFactory: %w", err)
	}
	f.forget = func(context.Context, ...string) {} // a caller's Mapper that cannot be reset keeps what it knows
	switch r := f.mapper.(type) {
	case nil:
		f.discovery = memory.NewMemCacheClientWithContext(discovery.ToDiscoveryInterfaceWithContext(dc))
		m := newKeepingMapper(f.discovery, f.stale.mark)
		f.mapper, f.forget = m, m.reset
	case meta.ResettableRESTMapperWithContext: // meta.ToResettableRESTMapperWithContext's too
		f.forget = func(ctx context.Context, _ ...string) { r.ResetWithContext(ctx) }
	case meta.ResettableRESTMapper:
		f.forget = func(context.Context, ...string) { r.Reset() }
	}
	f.served = newServedResources(discovery.ToDiscoveryInterfaceWithContext(dc), f.stale.mark)
	return f, nil
}

// InformerFor returns the factory's informer of T in the scope the options
// give, making it on first use. T is a built-in or custom type the
// factory's Scheme knows, *unstructured.Unstructured or
// *metav1.PartialObjectMetadata (these two with ForResource):
//
//	cms, err := sharedinformer.InformerFor[*corev1.ConfigMap](ctx, factory,
//		sharedinformer.InNamespace("shop"), sharedinformer.WithLabels("app=web"))
//
// Everything that can be checked is checked here, so a mistake is an error
// now rather than an informer that retries forever: the selectors parse,
// T is in the scheme, the server serves a resource of T's kind (or
// the ForResource resource holds T's kind and is spelled as the server
// spells it), and a namespace is given only for a namespaced resource
// (a *ScopeError otherwise, for every T). ctx bounds the discovery
// requests this may make, and its wait for another InformerFor's (one at
// a time uses the RESTMapper); if it ends before the checks are done,
// that is the error, since a check that could not ask would pass
// unchecked; so is a discovery request that failed where nothing else
// knows the answer (the RESTMapper may have read that same failure). A
// type the scheme knows in several versions is read in the
// scheme's first; name the version with ForResource to choose another.
//
// Each call is one hold on the informer, which runs until its last
// holder gives it back with Release (or until the ctx given to Start
// ends). An informer released by its last holder, or stopped because the
// ctx given to Start ended, is never handed out again: the next
// InformerFor makes a fresh one, which the next Start runs, once the old
// one has stopped, and waits for that within ctx (so one factory may
// serve a leader's successive terms,
// TestAnInformerStoppedWithStartsContextIsNotHandedOutAgain). Asked on an informer's own
// goroutine (a handler, OnError, a hook, a Transform), where the old one
// may be waiting for this very call to return, it does not wait: it
// returns a *StillStoppingError at once; ask from another goroutine.
//
// Go has no generic methods, so this is a function taking the factory.
func InformerFor[T informer.Object](ctx context.Context, f *Factory, opts ...InformerOption) (*Informer[T], error) {
	if f == nil {
		return nil, errors.New("sharedinformer: InformerFor: the factory is nil (make one with NewFactory)")
	}
	var c informerConfig
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("sharedinformer: InformerFor: option %d is nil", i)
		}
		opt(&c)
	}
	goType := reflect.TypeFor[T]()
	if err := c.source.ValidateScope(); err != nil {
		return nil, fmt.Errorf("sharedinformer: informer of %v: %w", goType, err)
	}
	indexers, err := typedIndexers[T](&c)
	if err != nil {
		return nil, err
	}
	transform, err := typedTransform[T](&c)
	if err != nil {
		return nil, err
	}
	if c.source.Resource, err = f.resolveResource(ctx, goType, c.source.Resource); err != nil {
		return nil, err
	}
	if err := f.checkScope(ctx, goType, c.source.Resource, c.source.Namespace); err != nil {
		return nil, err
	}
	// A check whose discovery request ctx cut short passed only because
	// it could not ask: hand out nothing unchecked.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sharedinformer: informer of %v: %w", goType, err)
	}
	c.source.Protobuf = !c.json && reflector.ProtobufCapable[T]()
	// A custom resource offers CBOR first: a server without the
	// CBORServingAndStorage gate answers JSON, so asking costs nothing
	// (TestAFactoryReadsCustomResourcesInCBORWhenTheServerOffersIt).
	c.source.CBOR = !c.json && goType == reflect.TypeFor[*unstructured.Unstructured]()
	src, err := c.source.Canonical()
	if err != nil {
		return nil, fmt.Errorf("sharedinformer: informer of %v: %w", goType, err)
	}

	key := factoryKey{goType: goType, source: src}
	if err := f.lockOnceStopped(ctx, key, c.name); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	if existing, ok := f.informers[key]; ok {
		inf := existing.inf.(*Informer[T])
		if len(c.shaped) > 0 {
			return nil, fmt.Errorf("sharedinformer: the informer of %s exists already; %v may only be given to the InformerFor that makes it", inf.Name(), slices.Compact(c.shaped))
		}
		if len(indexers) > 0 {
			if err := inf.indexer.AddIndexers(indexers); err != nil {
				return nil, fmt.Errorf("sharedinformer: informer of %s: %w", inf.Name(), err)
			}
		}
		existing.holders++
		return inf, nil
	}
	inf, err := newInformer[T](f, src, indexers, c)
	if err != nil {
		return nil, err
	}
	if transform != nil {
		if err := inf.SetTransform(transform); err != nil {
			return nil, err
		}
	}
	f.informers[key] = &held{inf: inf, holders: 1, done: make(chan struct{})}
	return inf, nil
}

// newInformer builds the informer of T for src, with its REST
// ListerWatcher and the factory's and the caller's options.
func newInformer[T informer.Object](f *Factory, src reflector.Source, indexers map[string]indexer.IndexFunc[T], c informerConfig) (*Informer[T], error) {
	lw, err := listerWatcherFor[T](f, src)
	if err != nil {
		return nil, err
	}
	name := c.name
	if name == "" {
		name = nameOf(lw)
	}
	exported, err := NewExportedMetrics(f.opts.Metrics, name, src.Resource)
	if err != nil {
		return nil, fmt.Errorf("sharedinformer: informer of %s: %w", name, err)
	}
	inf, err := New(Options[T]{
		Name:            name,
		ListerWatcher:   lw,
		Resource:        src.Resource.GroupResource(),
		Reflector:       holdBackWithin(f.cfg.Timeout, WithFactoryDefaults(c.tuning)),
		PartQueueLimit:  c.partQueueLimit,
		Indexers:        indexers,
		DetectMutations: c.detectMutations,
		Buffer:          f.opts.Buffer,
		Trace:           informer.Tee(f.opts.Trace, exported.Hook()),
		OnError:         f.opts.OnError,
		Logger:          f.opts.Logger,
		Served:          f.served.ForKind(src.Resource, src.Namespace, f.servedKind(reflect.TypeFor[T](), src.Resource.GroupVersion())),
	})
	if err != nil {
		exported.unregister() // the informer does not exist: a corrected request may take its name
		return nil, err
	}
	inf.stopped = exported.unregister // a stopped informer gives its name back, for the next term's factory
	return inf, nil
}

// listerWatcherFor picks the kind of REST ListerWatcher T needs.
func listerWatcherFor[T informer.Object](f *Factory, src reflector.Source) (reflector.ListerWatcher[T], error) {
	var lw any
	var err error
	switch reflect.TypeFor[T]() {
	case reflect.TypeFor[*unstructured.Unstructured]():
		lw, err = reflector.NewUnstructuredListerWatcher(f.cfg, src)
	case reflect.TypeFor[*metav1.PartialObjectMetadata]():
		lw, err = reflector.NewMetadataListerWatcher(f.cfg, src)
	default:
		lw, err = reflector.NewTypedListerWatcher[T](f.cfg, f.opts.Scheme, src)
	}
	if err != nil {
		return nil, err
	}
	return lw.(reflector.ListerWatcher[T]), nil
}

// RESTClient returns a client for one API group and version, built from
// the factory's rest.Config and Scheme: what a clientset builds
// underneath, for the writes a reconcile makes (informers are for
// reading). corev1.SchemeGroupVersion gives one for ConfigMaps, Secrets,
// Pods and the rest of the core group. It shares the factory's client
// rate limiter (see NewFactory).
func (f *Factory) RESTClient(gv schema.GroupVersion) (*rest.RESTClient, error) {
	if f.opts.Scheme == nil {
		return nil, fmt.Errorf("sharedinformer: Factory.RESTClient(%s) needs FactoryOptions.Scheme", gv)
	}
	return restclient.New(f.cfg, gv, serializer.NewCodecFactory(f.opts.Scheme).WithoutConversion(), false)
}

// holdBackWithin keeps a list's holding back (reflector.Tuning.HoldBack)
// to a quarter of the client's Timeout, which bounds a whole LIST request,
// body included: a list held back past it would fail every time. It only
// ever shortens it: the default stays within kube-apiserver's own limit.
func holdBackWithin(timeout time.Duration, t reflector.Tuning) reflector.Tuning {
	if timeout <= 0 || t.HoldBack < 0 {
		return t
	}
	if t.HoldBack == 0 {
		t.HoldBack = reflector.DefaultHoldBack
	}
	t.HoldBack = max(min(t.HoldBack, timeout/4), time.Nanosecond)
	return t
}
