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
// If the Indexer has an index named [indexer.NamespaceIndex], List reads
// only that namespace's bucket, so its cost grows with the objects in the
// namespace, not with the whole cache. Without one it scans every object:
// O(n). Both give the same result; the objects are checked against the
// namespace either way, so a differently defined index under that name
// cannot make List return objects from another namespace.
//
// The objects are shared with the cache: DeepCopy before modifying one.
func (n NamespaceLister[T]) List(selector labels.Selector) []T {
	if n.namespace == "" {
		return filter(n.idx.List(), "", selector)
	}
	if n.idx.HasIndex(indexer.NamespaceIndex) {
		// Indices are never removed, so this lookup cannot fail after
		// HasIndex said yes; the scan below stays as a safe fallback.
		if objs, err := n.idx.ByIndex(indexer.NamespaceIndex, n.namespace); err == nil {
			return filter(objs, n.namespace, selector)
		}
	}
	return filter(n.idx.List(), n.namespace, selector)
}

// Get returns the object called name in the namespace, or an error for
// which apierrors.IsNotFound is true. Cost: O(1).
//
// The object is shared with the cache: DeepCopy before modifying it.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return get(n.idx, n.resource, informer.Key{Namespace: n.namespace, Name: name})
}
