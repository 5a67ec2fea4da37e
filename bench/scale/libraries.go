package scale

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/informer"
)

// The two libraries, as the ladder's tables name them.
const (
	Ours     = "ours"
	ClientGo = "client-go"
)

// Variant is one way of building each library's informer for a sync row.
type Variant string

const (
	// Defaults: each library as a user gets it from its front door: our
	// Factory's InformerFor, client-go's SharedInformerFactory; both with
	// the namespace index client-go's factory always adds.
	Defaults Variant = "defaults"
	// StreamJSON: both stream the list (WATCH with sendInitialEvents) in
	// JSON, built from the parts: the same encoding and list semantics.
	StreamJSON Variant = "stream-json"
	// ListJSON: both LIST at resourceVersion "0" in JSON (client-go's
	// reflector before streaming lists), also the same semantics.
	ListJSON Variant = "list-rv0-json"
	// Stripped: Defaults with a transform that drops managedFields, the
	// largest part of most objects a controller never reads.
	Stripped Variant = "stripped"
	// MetadataOnly: Defaults with a lossy transform that keeps only the
	// object's metadata: a separate row, never the answer to "lossless".
	MetadataOnly Variant = "metadata-only"

	// The Widgets shape's variants, each named after the Go type both
	// libraries cache, each library at its defaults. A custom resource
	// has no protobuf, so they read JSON; but see PartialMetadata.

	// Typed: a Go type in a scheme. Ours is InformerFor[*Widget]; client-go
	// has no front door for a CRD's Go type, so it is what
	// controller-runtime builds: a SharedIndexInformer over a ListWatch of
	// a REST client with the scheme's JSON serializer.
	Typed Variant = "typed"
	// Unstructured: *unstructured.Unstructured, no Go type. Ours is
	// InformerFor with ForResource; client-go's is dynamicinformer's.
	Unstructured Variant = "unstructured"
	// PartialMetadata: *metav1.PartialObjectMetadata, only what the
	// server keeps of each object when asked for metadata (the rest never
	// leaves it). Ours is InformerFor with ForResource; client-go's is
	// metadatainformer's. Unlike MetadataOnly, a transform on objects
	// received whole. PartialObjectMetadata is a built-in type, so the
	// apiserver can encode it in protobuf even for a custom resource:
	// both libraries' metadata informers ask for protobuf first and get
	// it (the request log shows both; ours asked for JSON before
	// 4fa9cda).
	PartialMetadata Variant = "partial-metadata"
)

// VariantsOf is every variant a sync of shape can be built as; nil for a
// shape the ladder does not have.
func VariantsOf(shape string) []Variant {
	switch shape {
	case ConfigMaps, Pods:
		return []Variant{Defaults, StreamJSON, ListJSON, Stripped, MetadataOnly}
	case Widgets:
		return []Variant{Typed, Unstructured, PartialMetadata}
	}
	return nil
}

// checkSync returns an error unless lib (Ours or ClientGo) can sync
// shape as v.
func checkSync(shape, lib string, v Variant) error {
	if err := checkShape(shape); err != nil {
		return err
	}
	if lib != Ours && lib != ClientGo {
		return fmt.Errorf("scale: no library %q (want %q or %q)", lib, Ours, ClientGo)
	}
	if !slices.Contains(VariantsOf(shape), v) {
		return fmt.Errorf("scale: %s have no variant %q (have %v)", shape, v, VariantsOf(shape))
	}
	return nil
}

// shape ties an object shape to its Go type, for the generic runners.
type shape[T informer.Object] struct {
	resource string
	newT     func() T
	// dropBody keeps only what MetadataOnly keeps: TypeMeta and ObjectMeta.
	dropBody func(T) T
}

var configMapShape = shape[*corev1.ConfigMap]{
	resource: ConfigMaps,
	newT:     func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
	dropBody: func(cm *corev1.ConfigMap) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: cm.TypeMeta, ObjectMeta: cm.ObjectMeta}
	},
}

var podShape = shape[*corev1.Pod]{
	resource: Pods,
	newT:     func() *corev1.Pod { return &corev1.Pod{} },
	dropBody: func(p *corev1.Pod) *corev1.Pod { return &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta} },
}

// transformFor returns the variant's transform, or nil. It changes the
// object it is given, which both libraries allow: a transform runs on a
// freshly decoded object no one else holds.
func transformFor[T informer.Object](s shape[T], v Variant) func(T) T {
	switch v {
	case Stripped:
		return func(obj T) T { obj.SetManagedFields(nil); return obj }
	case MetadataOnly:
		return func(obj T) T { obj = s.dropBody(obj); obj.SetManagedFields(nil); return obj }
	}
	return nil
}

// scheme knows core/v1 and Widget, for the typed informers and clients.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, corev1.SchemeGroupVersion)
	if err := AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// running is an informer that is built: start runs it, synced closes when
// its cache holds the initial list, and stop ends it and waits until every
// goroutine it started has returned. Building (discovery, clients) happens
// before start, so a timed sync measures only the sync.
type running struct {
	start  func()
	synced <-chan struct{}
	len    func() int
	stop   func()
}

// waitSynced waits for r to sync, then checks that it holds n objects.
func (r running) waitSynced(ctx context.Context, n int) error {
	select {
	case <-r.synced:
	case <-ctx.Done():
		return fmt.Errorf("scale: not synced: %w", ctx.Err())
	}
	if got := r.len(); got != n {
		return fmt.Errorf("scale: synced %d objects, want %d", got, n)
	}
	return nil
}
