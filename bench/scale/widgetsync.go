package scale

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/sharedinformer"
)

// buildWidgets builds lib's informer (Ours or ClientGo) of the Widgets
// in ns, as v says (one of VariantsOf(Widgets)), with a handler that
// calls seen once per add or update. Every one of them indexes by
// namespace, as both libraries' factories do, and none is tuned: each
// reads JSON, but the metadata-only ones, which both libraries' defaults
// read as protobuf, and lists as its library does by default.
func buildWidgets(ctx context.Context, cfg *rest.Config, lib, ns string, v Variant, seen func()) (running, error) {
	if err := checkSync(Widgets, lib, v); err != nil {
		return running{}, err
	}
	if lib == Ours {
		return buildOursWidgets(ctx, cfg, ns, v, seen)
	}
	return buildClientGoWidgets(ctx, cfg, ns, v, seen)
}

// buildOursWidgets builds our informer of the Widgets in ns as v says,
// from a Factory at its defaults.
func buildOursWidgets(ctx context.Context, cfg *rest.Config, ns string, v Variant, seen func()) (running, error) {
	in := sharedinformer.InNamespace(ns)
	// The untyped kinds say which resource they hold with ForResource;
	// the typed one finds it through discovery, as a user's does.
	of := sharedinformer.ForResource(WidgetsResource)
	switch v {
	case Typed:
		return buildOursFactory[*Widget](ctx, cfg, seen, in)
	case Unstructured:
		return buildOursFactory[*unstructured.Unstructured](ctx, cfg, seen, in, of)
	case PartialMetadata:
		return buildOursFactory[*metav1.PartialObjectMetadata](ctx, cfg, seen, in, of)
	}
	return running{}, fmt.Errorf("scale: no informer of ours of %s as %q (have %v)", Widgets, v, VariantsOf(Widgets))
}

// buildClientGoWidgets builds client-go's informer of the Widgets in ns
// as v says, each from what a user of it builds.
func buildClientGoWidgets(ctx context.Context, cfg *rest.Config, ns string, v Variant, seen func()) (running, error) {
	var inf cache.SharedIndexInformer
	switch v {
	case Typed:
		client, err := jsonClient(cfg, WidgetGroupVersion)
		if err != nil {
			return running{}, err
		}
		lw := cache.NewListWatchFromClient(client, Widgets, ns, fields.Everything())
		inf = cache.NewSharedIndexInformer(lw, &Widget{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	case Unstructured:
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return running{}, err
		}
		inf = dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, ns, nil).ForResource(WidgetsResource).Informer()
	case PartialMetadata:
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			return running{}, err
		}
		inf = metadatainformer.NewFilteredSharedInformerFactory(client, 0, ns, nil).ForResource(WidgetsResource).Informer()
	default:
		return running{}, fmt.Errorf("scale: no client-go informer of %s as %q (have %v)", Widgets, v, VariantsOf(Widgets))
	}
	return clientGoRunning(ctx, inf, seen)
}
