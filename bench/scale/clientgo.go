package scale

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer"
)

// buildClientGo builds client-go's informer of s in ns, built as v says,
// with a handler that calls seen once per add or update.
func buildClientGo[T informer.Object](ctx context.Context, cfg *rest.Config, s shape[T], ns string, v Variant, seen func()) (running, error) {
	var inf cache.SharedIndexInformer
	switch v {
	case StreamJSON, ListJSON:
		client, err := coreClient(cfg, false)
		if err != nil {
			return running{}, err
		}
		var lw cache.ListerWatcher = cache.NewListWatchFromClient(client, s.resource, ns, fields.Everything())
		if v == ListJSON {
			lw = listOnly{lw.(*cache.ListWatch)}
		}
		inf = cache.NewSharedIndexInformer(lw, s.newT(), 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	default:
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return running{}, err
		}
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
		switch s.resource {
		case ConfigMaps:
			inf = factory.Core().V1().ConfigMaps().Informer()
		case Pods:
			inf = factory.Core().V1().Pods().Informer()
		default:
			return running{}, fmt.Errorf("scale: no client-go informer for %q", s.resource)
		}
		if t := transformFor(s, v); t != nil {
			if err := inf.SetTransform(func(obj any) (any, error) {
				if typed, ok := obj.(T); ok {
					return t(typed), nil
				}
				return obj, nil // a DeletedFinalStateUnknown, left as it is
			}); err != nil {
				return running{}, err
			}
		}
	}
	return clientGoRunning(ctx, inf, seen)
}

// clientGoRunning adds the counting handler to inf.
func clientGoRunning(ctx context.Context, inf cache.SharedIndexInformer, seen func()) (running, error) {
	if seen != nil {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { seen() },
			UpdateFunc: func(_, _ any) { seen() },
		}); err != nil {
			return running{}, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	return running{
		start:  func() { wg.Go(func() { inf.RunWithContext(ctx) }) },
		synced: inf.HasSyncedChecker().Done(),
		len:    func() int { return len(inf.GetStore().ListKeys()) },
		stop:   func() { cancel(); wg.Wait() },
	}, nil
}

// listOnly is a client-go ListerWatcher that declares it cannot stream
// lists, so client-go's reflector LISTs (at resourceVersion "0").
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// coreClient is a REST client for core/v1, as a clientset builds, in
// JSON or in protobuf.
func coreClient(cfg *rest.Config, protobuf bool) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	if protobuf {
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	}
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	return rest.RESTClientFor(cfg)
}

var codecs = serializer.NewCodecFactory(scheme)
