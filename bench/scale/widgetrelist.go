package scale

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/informer/reflector"
	"github.com/listwatch/informer/sharedinformer"
)

// The relist kinds of Widgets besides Ours (a Go type, read as JSON: a
// custom resource has no protobuf), OursUnstructured (which offers CBOR
// first, as InformerFor does), OursMetadata and ClientGo, named as
// syncpair names its Widget variants.
const (
	// OursUnstructuredCBOR is OursUnstructured, the same informer: it
	// offers CBOR first, as InformerFor does for unstructured objects.
	// The name is for a run whose server has its CBORServingAndStorage
	// gate on, so the list comes in CBOR; the caller checks that it did
	// (syncpair refuses the sample otherwise).
	OursUnstructuredCBOR = "ours-unstructured-cbor"
	// OursUnstructuredJSON asks for JSON alone, as InformerFor with
	// WithJSON does.
	OursUnstructuredJSON = "ours-unstructured-json"
	// ClientGoDynamic and ClientGoMetadata are client-go's informers of
	// unstructured objects and of metadata only, each over the
	// ListWatch its informer factory (dynamicinformer, metadatainformer)
	// builds: JSON, and protobuf for the metadata.
	ClientGoDynamic  = "client-go-dynamic"
	ClientGoMetadata = "client-go-metadata"
	// ClientGoDynamicCBOR is ClientGoDynamic, the same informer, named
	// for a process whose client-go has its ClientsAllowCBOR gate on
	// (KUBE_FEATURE_ClientsAllowCBOR=true), and a server that answers
	// CBOR; the caller sets the one and checks the other (syncpair does).
	ClientGoDynamicCBOR = "client-go-dynamic-cbor"
)

// WidgetRelistKinds are the libraries and kinds Relists takes for
// Widgets: each of the ladder's Widget variants (VariantsOf(Widgets)) of
// each library, ours unstructured as CBOR and as JSON, and client-go's
// dynamic informer as CBOR.
var WidgetRelistKinds = []string{Ours, OursUnstructured, OursUnstructuredCBOR, OursUnstructuredJSON, OursMetadata, ClientGo, ClientGoDynamic, ClientGoDynamicCBOR, ClientGoMetadata}

// buildRelistingWidgets is buildRelisting's Widget informer (lib is one
// of WidgetRelistKinds): ours built from the parts InformerFor builds it
// from, client-go's as its users build it, each with expirable watches.
func buildRelistingWidgets(ctx context.Context, cfg *rest.Config, lib, ns string, x *expirer, seen func()) (running, error) {
	processed := processedBy(seen)
	tuning := sharedinformer.WithFactoryDefaults(reflector.Tuning{})
	src := reflector.Source{Resource: WidgetsResource, Namespace: ns}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	switch lib {
	case Ours:
		lw, err := reflector.NewTypedListerWatcher[*Widget](cfg, scheme, src)
		if err != nil {
			return running{}, err
		}
		return buildOursFrom[*Widget](ctx, oursExpiringLW[*Widget]{lw: lw, x: x}, tuning, processed, nil)
	case OursUnstructured, OursUnstructuredCBOR, OursUnstructuredJSON:
		src.CBOR = lib != OursUnstructuredJSON // as InformerFor offers it, unless WithJSON
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
	case ClientGo: // what controller-runtime builds for a Go type (buildClientGoWidgets)
		client, err := jsonClient(cfg, WidgetGroupVersion)
		if err != nil {
			return running{}, err
		}
		lw := cache.NewListWatchFromClient(client, Widgets, ns, fields.Everything())
		x.wrapListWatch(lw)
		return clientGoRunning(ctx, cache.NewSharedIndexInformer(lw, &Widget{}, 0, indexers), seen)
	case ClientGoDynamic, ClientGoDynamicCBOR:
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return running{}, err
		}
		widgets := client.Resource(WidgetsResource).Namespace(ns)
		lw := resourceListWatch(widgets.List, widgets.Watch)
		x.wrapListWatch(lw)
		inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &unstructured.Unstructured{}, 0, indexers)
		return clientGoRunning(ctx, inf, seen)
	case ClientGoMetadata:
		client, err := metadata.NewForConfig(cfg)
		if err != nil {
			return running{}, err
		}
		widgets := client.Resource(WidgetsResource).Namespace(ns)
		lw := resourceListWatch(widgets.List, widgets.Watch)
		x.wrapListWatch(lw)
		inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, client), &metav1.PartialObjectMetadata{}, 0, indexers)
		return clientGoRunning(ctx, inf, seen)
	}
	return running{}, fmt.Errorf("scale: no relist kind %q of %s (have %v)", lib, Widgets, WidgetRelistKinds)
}

// resourceListWatch is the ListWatch client-go's dynamic and metadata
// informer factories build over one resource's client: its List and its
// Watch, as they are.
func resourceListWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error), watch func(context.Context, metav1.ListOptions) (watch.Interface, error)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc:  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) { return list(ctx, opts) },
		WatchFuncWithContext: watch,
	}
}
