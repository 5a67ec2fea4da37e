package sharedinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/reflector"
)

// FactoryOptions configure a Factory and the informers it makes.
type FactoryOptions struct {
	// Scheme knows the Go types of typed informers (corev1.AddToScheme for
	// *corev1.Pod, ...). Not needed for *unstructured.Unstructured or
	// *metav1.PartialObjectMetadata. Default: none.
	Scheme *runtime.Scheme
	// Buffer, Trace, OnError and Logger are given to every informer; see
	// Options for their defaults.
	Buffer  BufferPolicy
	Trace   informer.TraceHook
	OnError func(error)
	Logger  *slog.Logger
}

// Factory hands out shared informers: one per (Go type, resource,
// namespace, label selector, field selector, encoding), however many
// callers ask. Controllers in one process that need the same collection
// then share one LIST, one WATCH and one cache.
//
// Scope is part of the identity (pitfall 7): an informer for the Pods of
// namespace "a" and one for all Pods are two informers with two caches,
// and the Pods of "a" are held twice. Ask for the same scope to share.
//
// Use: ask for informers with InformerFor, register handlers, then Start
// and WaitForCacheSync; when ctx ends, Wait for them to stop.
type Factory struct {
	cfg  *rest.Config
	opts FactoryOptions

	mu sync.Mutex
	// informers holds *Informer[T] for many T: the one place this module
	// stores values of several types in one map. Guarded by mu.
	informers map[factoryKey]runnable
	// started are the informers Start has started. Guarded by mu.
	started map[factoryKey]bool
	running sync.WaitGroup // the Run goroutines
}

// factoryKey identifies one shared informer.
type factoryKey struct {
	goType reflect.Type
	source reflector.Source
}

// runnable is what the factory needs of an *Informer[T], whatever T is.
type runnable interface {
	Run(ctx context.Context) error
	Synced() <-chan struct{}
}

// NewFactory returns a Factory whose informers connect with cfg.
func NewFactory(cfg *rest.Config, opts FactoryOptions) *Factory {
	return &Factory{cfg: cfg, opts: opts, informers: map[factoryKey]runnable{}, started: map[factoryKey]bool{}}
}

// InformerFor returns the factory's informer of T for src, making it on
// first use. T is a built-in type the factory's Scheme knows,
// *unstructured.Unstructured (any resource), or
// *metav1.PartialObjectMetadata (any resource, metadata only).
//
// Go has no generic methods, so this is a function taking the factory.
func InformerFor[T informer.Object](f *Factory, src reflector.Source) (*Informer[T], error) {
	key := factoryKey{goType: reflect.TypeFor[T](), source: src}
	f.mu.Lock()
	defer f.mu.Unlock()
	if existing, ok := f.informers[key]; ok {
		return existing.(*Informer[T]), nil
	}
	lw, err := listerWatcherFor[T](f, src)
	if err != nil {
		return nil, err
	}
	inf, err := New(Options[T]{
		ListerWatcher: lw,
		Resource:      src.Resource.GroupResource(),
		Buffer:        f.opts.Buffer,
		Trace:         f.opts.Trace,
		OnError:       f.opts.OnError,
		Logger:        f.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	f.informers[key] = inf
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
		if f.opts.Scheme == nil {
			return nil, fmt.Errorf("sharedinformer: an informer of %v needs FactoryOptions.Scheme", reflect.TypeFor[T]())
		}
		lw, err = reflector.NewTypedListerWatcher[T](f.cfg, f.opts.Scheme, src)
	}
	if err != nil {
		return nil, err
	}
	return lw.(reflector.ListerWatcher[T]), nil
}

// Start runs every informer made so far that is not running yet, each in
// a goroutine, until ctx ends. Call it again for informers made later.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, inf := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		f.running.Go(func() {
			if err := inf.Run(ctx); err != nil {
				f.report(err)
			}
		})
	}
}

// WaitForCacheSync waits until every started informer has synced, and
// returns nil; or until ctx ends, and returns a *NotSyncedError naming
// each informer that has not, with its last failure.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	f.mu.Lock()
	var syncers []Syncer
	for key, inf := range f.informers {
		if f.started[key] {
			syncers = append(syncers, inf)
		}
	}
	f.mu.Unlock()
	if len(syncers) == 0 {
		return errors.New("sharedinformer: Factory.WaitForCacheSync with no started informer: call Start first")
	}
	return WaitForCacheSync(ctx, syncers...)
}

// Wait blocks until every informer Start started has stopped, which
// happens once the ctx given to Start ends.
func (f *Factory) Wait() { f.running.Wait() }

func (f *Factory) report(err error) {
	if f.opts.OnError != nil {
		f.opts.OnError(err)
		return
	}
	logger := f.opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger.Error("informer factory", "err", err)
}
