package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// watcher keeps one metadata-only informer per custom resource served.
type watcher struct {
	factory *sharedinformer.Factory
	crds    *sharedinformer.Informer[*unstructured.Unstructured]
	queue   *workqueue.Queue[informer.Key]
	out     *lines
	// watching is the informer held for each CRD, by the CRD's name. Only
	// the one worker reads and writes it.
	watching map[string]watched
}

// watched is one informer the watcher holds, and what it watches.
type watched struct {
	resource schema.GroupVersionResource
	inf      *sharedinformer.Informer[*metav1.PartialObjectMetadata]
}

func newWatcher(ctx context.Context, cfg *rest.Config, out io.Writer) (*watcher, error) {
	factory, err := sharedinformer.NewFactory(cfg, sharedinformer.FactoryOptions{})
	if err != nil {
		return nil, err
	}
	crds, err := sharedinformer.InformerFor[*unstructured.Unstructured](ctx, factory, sharedinformer.ForResource(crdsResource))
	if err != nil {
		return nil, err
	}
	w := &watcher{factory: factory, crds: crds, out: &lines{w: out}, watching: map[string]watched{},
		queue: workqueue.New(workqueue.Options[informer.Key]{})}
	if _, err := crds.AddEventHandler(sharedinformer.EnqueueKey[*unstructured.Unstructured](w.queue)); err != nil {
		return nil, err
	}
	return w, nil
}

// run starts the CRD informer, then reconciles CRDs until ctx ends.
func (w *watcher) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); w.factory.Wait() }()
	w.factory.Start(ctx)
	if err := w.factory.WaitForCacheSync(ctx); err != nil {
		return err
	}
	w.out.printf("watching CustomResourceDefinitions: %d installed\n", w.crds.Indexer().Len())
	defer w.queue.ShutDown()
	// One worker: reconciles of two CRDs never race for the map.
	workqueue.Run(ctx, w.queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		return workqueue.Result{}, w.reconcile(ctx, key.Name)
	}, workqueue.RunOptions[informer.Key]{})
	return nil
}

// reconcile makes the informer held for CRD name the one it should be:
// none, or one of the resource it serves now. ctx is run's: the informers
// started here run until it ends or they are released.
func (w *watcher) reconcile(ctx context.Context, name string) error {
	crd, err := w.crds.Lister().Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	want, why := servedResource(crd)
	have, held := w.watching[name]
	if held && have.resource == want {
		return nil
	}
	if held { // deleted, or served in another version now
		if why == "" {
			why = "now served as " + want.Version
		}
		if err := sharedinformer.Release(ctx, w.factory, have.inf); err != nil {
			return err
		}
		delete(w.watching, name)
		w.out.printf("- %s: released (%s)\n", describe(have.resource), why)
	}
	if want.Empty() {
		return nil
	}
	inf, err := sharedinformer.InformerFor[*metav1.PartialObjectMetadata](ctx, w.factory, sharedinformer.ForResource(want))
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(&printer{resource: describe(want), out: w.out}); err != nil {
		return errors.Join(err, sharedinformer.Release(ctx, w.factory, inf))
	}
	w.watching[name] = watched{resource: want, inf: inf}
	w.factory.Start(ctx)
	w.out.printf("+ %s: informer started (metadata only)\n", describe(want))
	return nil
}

// printer prints what one informer caches, as it changes.
type printer struct {
	resource string
	out      *lines
}

func (p *printer) OnAdd(obj *metav1.PartialObjectMetadata, _ bool) {
	p.out.printf("  %s: cached %s\n", p.resource, keyOf(obj))
}
func (p *printer) OnUpdate(_, _ *metav1.PartialObjectMetadata) {}
func (p *printer) OnDelete(obj *metav1.PartialObjectMetadata, _ bool) {
	p.out.printf("  %s: dropped %s\n", p.resource, keyOf(obj))
}

func keyOf(obj *metav1.PartialObjectMetadata) string {
	if obj.Namespace == "" {
		return obj.Name
	}
	return obj.Namespace + "/" + obj.Name
}

// lines writes whole lines to w from any goroutine: every informer's
// handler runs on a goroutine of its own.
type lines struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lines) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}
