package lister

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
)

// NamespaceLister is a [Lister] narrowed to one namespace: what client-go
// calls a PodNamespaceLister, for any type. Get it from Lister.Namespace.
// It is a small value, safe for concurrent use.
type NamespaceLister[T informer.Object] struct {
	idx       *indexer.Indexer[T]
	resource  schema.GroupResource
	namespace string // "" means every namespace (metav1.NamespaceAll)
}

// List returns the objects in the namespace whose labels match selector,
// in no particular order. A nil selector matches every object.
//
// It reads only that namespace's objects ([indexer.Indexer.Namespace],
// the Indexer's layout), so its cost grows with the objects in the
// namespace, not with the whole cache.
//
// The objects are shared with the cache: DeepCopy before modifying one.
func (n NamespaceLister[T]) List(selector labels.Selector) []T {
	if n.namespace == "" {
		return filter(n.idx.List(), "", selector)
	}
	return filter(n.idx.Namespace(n.namespace), "", selector)
}

// Get returns the object called name in the namespace, or an error for
// which apierrors.IsNotFound is true. Cost: O(1).
//
// The object is shared with the cache: DeepCopy before modifying it.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return get(n.idx, n.resource, informer.Key{Namespace: n.namespace, Name: name})
}
