package reflector

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/restclient"
)

// NewTypedListerWatcher returns a ListerWatcher for a Go type T, such as
// *corev1.ConfigMap, that scheme knows in src.Resource's group and
// version, together with its list type (ConfigMapList); corev1.AddToScheme
// registers both. cfg is not modified; its QPS, Burst, UserAgent and
// credentials are used.
//
//	scheme := runtime.NewScheme()
//	_ = corev1.AddToScheme(scheme)
//	lw, err := reflector.NewTypedListerWatcher[*corev1.ConfigMap](cfg, scheme, reflector.Source{
//		Resource:  corev1.SchemeGroupVersion.WithResource("configmaps"),
//		Namespace: "default",
//		Protobuf:  true,
//	})
func NewTypedListerWatcher[T informer.Object](cfg *rest.Config, scheme *runtime.Scheme, src Source) (*RESTListerWatcher[T], error) {
	src, err := src.Canonical()
	if err != nil {
		return nil, err
	}
	if src.CBOR {
		return nil, errors.New("reflector: Source.CBOR is for unstructured objects (custom resources); a Go type has Source.Protobuf")
	}
	gv := src.Resource.GroupVersion()
	kind, err := kindOf[T](scheme, gv)
	if err != nil {
		return nil, err
	}
	listKind := gv.WithKind(kind.Kind + "List")
	if !scheme.Recognizes(listKind) {
		return nil, fmt.Errorf("reflector: the scheme knows %s but not its list type %s: register both, scheme.AddKnownTypes(gv, &T{}, &TList{})", kind, listKind)
	}
	client, err := restclient.New(cfg, gv, serializer.NewCodecFactory(scheme).WithoutConversion(), src.Protobuf)
	if err != nil {
		return nil, err
	}
	return &RESTListerWatcher[T]{
		client:   client,
		src:      src,
		listType: metav1.TypeMeta{Kind: listKind.Kind, APIVersion: gv.String()},
		jsonItem: typedJSONItem[T](kind.Kind),
		protobuf: src.Protobuf && ProtobufCapable[T](),
	}, nil
}

// NewUnstructuredListerWatcher returns a ListerWatcher for any resource,
// built-in or custom, as *unstructured.Unstructured: no Go type needed,
// only the GroupVersionResource. JSON, or with src.CBOR, CBOR when the
// server offers it and JSON when it does not.
func NewUnstructuredListerWatcher(cfg *rest.Config, src Source) (*RESTListerWatcher[*unstructured.Unstructured], error) {
	src, err := src.Canonical()
	if err != nil {
		return nil, err
	}
	if src.Protobuf {
		return nil, errors.New("reflector: unstructured objects are read as JSON or CBOR; Source.Protobuf is for built-in types")
	}
	client, err := restclient.New(cfg, src.Resource.GroupVersion(), unstructuredCodecs{cbor: src.CBOR}, false)
	if err != nil {
		return nil, err
	}
	lw := &RESTListerWatcher[*unstructured.Unstructured]{
		client: client, src: src, jsonItem: unstructuredJSONItem, mode: "unstructured",
		// Any kind, in the version asked: the server answers in the
		// version the request's path names.
		listType: metav1.TypeMeta{APIVersion: src.Resource.GroupVersion().String()},
	}
	if src.CBOR {
		lw.cborItem = unstructuredCBORItem
		lw.listAccept, lw.watchAccept = cborAccept, cborAccept
	}
	return lw, nil
}

// cborAccept offers CBOR first and JSON as the fallback. kube-apiserver
// answers a LIST in application/cbor, a WATCH in application/cbor-seq
// (one data item per event), when its CBORServingAndStorage gate is on,
// and both in JSON when it is off (TestWithoutTheCBORGateTheServerAnswersJSONToACBORFirstAccept).
const cborAccept = runtime.ContentTypeCBOR + ";q=1," + runtime.ContentTypeJSON + ";q=0.9"

// NewMetadataListerWatcher returns a ListerWatcher for any resource that
// reads only each object's metadata (name, namespace, labels, annotations,
// owner references, resourceVersion) as *metav1.PartialObjectMetadata. The
// server strips the rest before sending, so a cache of Secrets or Pods
// kept this way costs a fraction of the memory (pitfall 7).
//
// With src.Protobuf the answers come in protobuf, for custom resources
// too: PartialObjectMetadata is a built-in type whatever it was made
// from, so the API server encodes it in protobuf even where it serves
// the objects themselves only as JSON. sharedinformer.InformerFor asks
// for it, as client-go's metadata client does.
func NewMetadataListerWatcher(cfg *rest.Config, src Source) (*RESTListerWatcher[*metav1.PartialObjectMetadata], error) {
	src, err := src.Canonical()
	if err != nil {
		return nil, err
	}
	if src.CBOR {
		return nil, errors.New("reflector: Source.CBOR is for unstructured objects (custom resources); the metadata-only form has Source.Protobuf")
	}
	client, err := restclient.New(cfg, src.Resource.GroupVersion(), serializer.NewCodecFactory(metadataScheme).WithoutConversion(), src.Protobuf)
	if err != nil {
		return nil, err
	}
	return &RESTListerWatcher[*metav1.PartialObjectMetadata]{
		client:   client,
		src:      src,
		listType: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: metav1.SchemeGroupVersion.String()},
		jsonItem: typedJSONItem[*metav1.PartialObjectMetadata]("PartialObjectMetadata"),
		mode:     "metadata only",
		protobuf: src.Protobuf,
		// "as=" asks the server to transform each object before sending
		// it: a list into a PartialObjectMetadataList, each object of a
		// watch into a PartialObjectMetadata. Either form asked of the
		// other request fails (406, or a watch with no event).
		listAccept:  partialAccept("PartialObjectMetadataList", src.Protobuf),
		watchAccept: partialAccept("PartialObjectMetadata", src.Protobuf),
	}, nil
}

// partialAccept is the Accept header that asks for the metadata-only
// form as, in protobuf first if protobuf, else in JSON alone.
func partialAccept(as string, protobuf bool) string {
	form := ";as=" + as + ";g=meta.k8s.io;v=v1"
	if protobuf {
		return runtime.ContentTypeProtobuf + form + "," + runtime.ContentTypeJSON + form
	}
	return runtime.ContentTypeJSON + form
}

// kindOf finds T's kind in group/version gv of scheme.
func kindOf[T informer.Object](scheme *runtime.Scheme, gv schema.GroupVersion) (schema.GroupVersionKind, error) {
	var zero T
	typ := reflect.TypeOf(&zero).Elem()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return schema.GroupVersionKind{}, fmt.Errorf("reflector: T must be a pointer to a struct type, such as *corev1.Pod; got %v", typ)
	}
	obj := reflect.New(typ.Elem()).Interface().(T)
	kinds, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("reflector: %w", err)
	}
	for _, k := range kinds {
		if k.GroupVersion() == gv {
			return k, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("reflector: the scheme knows %v as %v, not in %s", typ, kinds, gv)
}

// metadataScheme decodes what the metadata-only mode reads: the
// PartialObjectMetadata types, and the Status and WatchEvent envelopes.
var metadataScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = metav1.AddMetaToScheme(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// envelopeScheme knows only the envelopes around objects: WatchEvent and
// Status.
var envelopeScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()
