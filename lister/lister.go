package lister

import (
	"errors"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
)

// Lister is a typed, read-only view of an informer's cache. It answers the
// questions a controller asks (all objects, those matching a label
// selector, one by name) from memory, never from the API server.
//
// It differs from the [indexer.Indexer] it wraps in what it leaves out: it
// cannot write, and it speaks the API server's language (label selectors,
// NotFound errors), so reconcile code reads the same whether it asks the
// cache or the server.
//
// A Lister holds no state of its own; it is safe for concurrent use and
// cheap to copy or create.
type Lister[T informer.Object] struct {
	idx      *indexer.Indexer[T]
	resource schema.GroupResource // named in NotFound errors
}

// New returns a Lister over idx. resource (such as {Resource: "pods"})
// is only used to word NotFound errors the way the API server does.
//
// New fails if idx is nil: a mistake reported where it is made rather
// than at the first read.
func New[T informer.Object](idx *indexer.Indexer[T], resource schema.GroupResource) (*Lister[T], error) {
	if idx == nil {
		return nil, errors.New("lister.New: the indexer is nil")
	}
	return &Lister[T]{idx: idx, resource: resource}, nil
}

// List returns the objects, in every namespace, whose labels match
// selector, in no particular order. A nil selector, like
// labels.Everything(), matches every object. Cost: O(n) for n cached
// objects, plus one selector match per object unless it is empty.
//
// The objects are shared with the cache: DeepCopy before modifying one.
func (l *Lister[T]) List(selector labels.Selector) []T {
	return filter(l.idx.List(), "", selector)
}

// Get returns the cluster-scoped object called name (a Node, a Namespace),
// or an error for which apierrors.IsNotFound is true. Cost: O(1).
//
// The object is shared with the cache: DeepCopy before modifying it.
func (l *Lister[T]) Get(name string) (T, error) {
	return get(l.idx, l.resource, informer.Key{Name: name})
}

// Namespace returns a view of the objects in one namespace. The namespace
// "" (metav1.NamespaceAll) means every namespace for List, as it does in
// the API, and cluster-scoped objects for Get.
func (l *Lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{idx: l.idx, resource: l.resource, namespace: namespace}
}

// get looks key up and turns a miss into the API server's NotFound error.
func get[T informer.Object](idx *indexer.Indexer[T], resource schema.GroupResource, key informer.Key) (T, error) {
	obj, ok := idx.Get(key)
	if !ok {
		var zero T
		return zero, apierrors.NewNotFound(resource, key.Name)
	}
	return obj, nil
}

// filter keeps, in place, the objects in namespace (any namespace if "")
// whose labels match selector (all if nil or empty).
func filter[T informer.Object](objs []T, namespace string, selector labels.Selector) []T {
	matchAll := selector == nil || selector.Empty()
	if matchAll && namespace == "" {
		return objs
	}
	kept := objs[:0]
	for _, obj := range objs {
		if namespace != "" && obj.GetNamespace() != namespace {
			continue
		}
		if !matchAll && !selector.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		kept = append(kept, obj)
	}
	clear(objs[len(kept):]) // let dropped objects go; the slice is ours
	return kept
}
