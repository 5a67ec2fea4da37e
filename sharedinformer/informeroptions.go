package sharedinformer

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	"github.com/listwatch/informer/reflector"
)

// InformerOption is one argument of InformerFor: the scope of the
// informer (InNamespace, WithLabels, WithFields), its resource when the Go
// type does not say it (ForResource), or how it is built (WithIndexers,
// WithTransform, WithReflector, WithMutationDetection, WithJSON).
type InformerOption func(*informerConfig)

// informerConfig collects InformerFor's options. The typed ones (indexers,
// transform) are held as any and checked against T by InformerFor, since
// an option cannot carry the informer's type parameter.
type informerConfig struct {
	source          reflector.Source // Resource is set only by ForResource
	json            bool             // WithJSON: no protobuf, even for a built-in type
	indexers        any              // map[string]indexer.IndexFunc[T]
	transform       any              // func(T) (T, error)
	tuning          reflector.Tuning
	partQueueLimit  int
	detectMutations bool
	name            string   // WithName; "" for the default
	shaped          []string // the options that shape the informer, by name
}

// InNamespace limits the informer to one namespace. Without it, an
// informer of a namespaced resource sees every namespace. A
// cluster-scoped resource (Nodes, Namespaces) has no namespaces: asking
// for one in a namespace is an error from InformerFor, a *ScopeError.
func InNamespace(namespace string) InformerOption {
	return func(c *informerConfig) { c.source.Namespace = namespace }
}

// WithLabels filters by a label selector, such as "app=web" or
// "tier in (web,db)". It is parsed by InformerFor: one that does not
// parse is an error there, naming it, not a LIST that fails forever. The
// informer is keyed, named and lists by the parsed selector in one
// spelling, so "app==web" and "app in (web)" share the informer of
// "app=web".
func WithLabels(selector string) InformerOption {
	return func(c *informerConfig) { c.source.LabelSelector = selector }
}

// WithFields filters by a field selector, such as "spec.nodeName=node-1".
// Like WithLabels, it is parsed by InformerFor and spelt one way
// ("==" is "=").
func WithFields(selector string) InformerOption {
	return func(c *informerConfig) { c.source.FieldSelector = selector }
}

// ForResource names the resource explicitly. It is needed for
// *unstructured.Unstructured and *metav1.PartialObjectMetadata, whose Go
// type does not say which resource they hold, and for them it is only
// checked for its scope (see InNamespace). For a typed informer it is checked against the type through
// discovery: a resource that holds another kind, or a name that is not the
// plural ("configmap"), is an error. A resource discovery does not know
// (a CRD not installed yet) is not an error: the informer's LIST gets
// 404, discovery confirms the resource is not served, and the informer
// reports reflector.ErrNotServed once and then asks only discovery, with
// no LIST or WATCH, until the CRD is installed; then it lists. Its sync
// wait reports it as not synced meanwhile.
func ForResource(gvr schema.GroupVersionResource) InformerOption {
	return func(c *informerConfig) { c.source.Resource = gvr }
}

// WithJSON reads a built-in type, any resource's metadata-only form, or
// a custom resource as JSON. Without it, InformerFor reads every type
// that can be read as protobuf (reflector.ProtobufCapable: the built-in
// ones, and *metav1.PartialObjectMetadata for any resource) as protobuf,
// which decodes several times faster, and offers CBOR first for
// *unstructured.Unstructured (reflector.Source.CBOR), which the server
// answers in CBOR only with its CBORServingAndStorage gate on (alpha, off
// by default in 1.37) and in JSON otherwise; the informer's name says
// "offers CBOR" either way, and each LIST's trace event the encoding that
// came. Use it to read the traffic
// with a proxy, or against a server that does not encode protobuf.
func WithJSON() InformerOption {
	return func(c *informerConfig) { c.json = true }
}

// WithIndexers adds indices to the informer's cache (Options.Indexers).
// Another InformerFor of the same informer may add indices of other names.
func WithIndexers[T informer.Object](indexers map[string]indexer.IndexFunc[T]) InformerOption {
	return func(c *informerConfig) { c.indexers = indexers }
}

// WithTransform sets the informer's transform (Informer.SetTransform).
// Only the InformerFor that makes the informer may set it. A nil function
// is an error: leave the option out for no transform.
func WithTransform[T informer.Object](transform func(T) (T, error)) InformerOption {
	return func(c *informerConfig) { c.transform = transform; c.shaped = append(c.shaped, "WithTransform") }
}

// WithReflector tunes how the informer lists, watches and retries
// (Options.Reflector). Its zero fields take the factory's defaults (see
// WithFactoryDefaults). Only the InformerFor that makes the informer may
// set it.
func WithReflector(tuning reflector.Tuning) InformerOption {
	return func(c *informerConfig) { c.tuning = tuning; c.shaped = append(c.shaped, "WithReflector") }
}

// WithPartQueueLimit sets how many keys may wait to be popped before a
// list read in parts waits for the informer (Options.PartQueueLimit).
// Only the InformerFor that makes the informer may set it.
func WithPartQueueLimit(n int) InformerOption {
	return func(c *informerConfig) { c.partQueueLimit = n; c.shaped = append(c.shaped, "WithPartQueueLimit") }
}

// WithMutationDetection turns on the cache's mutation detector
// (Options.DetectMutations). Only the InformerFor that makes the informer
// may set it.
func WithMutationDetection() InformerOption {
	return func(c *informerConfig) {
		c.detectMutations = true
		c.shaped = append(c.shaped, "WithMutationDetection")
	}
}

// WithName names the informer (Options.Name) in logs, errors, the sync
// wait and its metrics' name label, instead of its resource and scope.
// Give a stable name to an informer whose scope changes from run to run,
// such as a shard member's, whose label selector names a member id new
// every term: its metrics then keep one set of series. Only the
// InformerFor that makes the informer may set it.
func WithName(name string) InformerOption {
	return func(c *informerConfig) { c.name = name; c.shaped = append(c.shaped, "WithName") }
}

// typedIndexers returns the indexers as T's, or an error naming both types.
func typedIndexers[T informer.Object](c *informerConfig) (map[string]indexer.IndexFunc[T], error) {
	if c.indexers == nil {
		return nil, nil
	}
	m, ok := c.indexers.(map[string]indexer.IndexFunc[T])
	if !ok {
		return nil, fmt.Errorf("sharedinformer: WithIndexers of %v given to an informer of %v", reflect.TypeOf(c.indexers).Elem().In(0), reflect.TypeFor[T]())
	}
	return m, nil
}

// typedTransform returns the transform as T's, or an error naming both.
func typedTransform[T informer.Object](c *informerConfig) (func(T) (T, error), error) {
	if c.transform == nil {
		return nil, nil
	}
	fn, ok := c.transform.(func(T) (T, error))
	if !ok {
		return nil, fmt.Errorf("sharedinformer: WithTransform of %v given to an informer of %v", reflect.TypeOf(c.transform).In(0), reflect.TypeFor[T]())
	}
	if fn == nil {
		return nil, fmt.Errorf("sharedinformer: WithTransform was given a nil function for the informer of %v: leave the option out for no transform", reflect.TypeFor[T]())
	}
	return fn, nil
}

// WithFactoryDefaults fills t's zero fields with the defaults InformerFor
// uses, which are the reflector's except one: PageSize is -1, so the
// initial list (and every relist) is one consistent LIST, unpaged.
//
// Why not pages, as client-go's pager and this library's reflector
// default to: since Kubernetes 1.31 the API server answers a consistent
// LIST from its watch cache, without reading etcd, and recent versions
// encode the response object by object instead of building it whole; every
// page, meanwhile, is a round trip and a fresh walk of the cache. A first
// measurement at 100k ConfigMaps had one unpaged LIST faster than pages of
// 500 and than client-go's streaming list, for less of the server's CPU;
// it was kept in no record (docs/17, lesson 2). A server without its watch cache reads
// etcd in one request then: give PageSize 500 to page against such a
// server.
func WithFactoryDefaults(t reflector.Tuning) reflector.Tuning {
	if t.PageSize == 0 {
		t.PageSize = -1
	}
	return t
}
