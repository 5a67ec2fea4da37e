package sharedinformer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
)

// Enqueuer is where the handlers below put keys: a
// *workqueue.Queue[informer.Key] is one.
type Enqueuer interface {
	Add(key informer.Key)
}

// EnqueueKey is the handler almost every controller starts with: on an
// add, an update and a delete (final state known or not) alike, it adds
// the object's own key to q. What changed does not matter; the reconcile
// looks at the object as it is now (level-triggered).
//
//	reg, err := configMaps.AddEventHandler(sharedinformer.EnqueueKey[*corev1.ConfigMap](queue))
//
// A nil q gives a nil Handler, which AddEventHandler rejects.
func EnqueueKey[T informer.Object](q Enqueuer) Handler[T] {
	return EnqueueMapped(q, func(obj T) []informer.Key { return []informer.Key{informer.KeyFor(obj)} })
}

// EnqueueOwner adds the key of the object's controller, when that
// controller is of kind owner: the handler for the children a controller
// creates (controller-runtime's Owns). A Secret made for a ConfigMap, with
// a controller owner reference to it, enqueues the ConfigMap's key, so the
// ConfigMap is reconciled when its Secret is changed or deleted by
// someone else. The owner is looked for in the object's namespace: an
// owner reference names no namespace, and a namespaced owner is in its
// child's. A namespaced child may also be owned by a cluster-scoped
// object (a Tenant of a custom resource, say): use
// EnqueueClusterScopedOwner for that kind. An object with no controller
// of kind owner enqueues nothing.
//
// On an update it enqueues the owner of the old and of the new object,
// so a child that changed hands is seen by both. A nil q, or an owner with
// no Kind, gives a nil Handler, which AddEventHandler rejects.
func EnqueueOwner[T informer.Object](q Enqueuer, owner schema.GroupKind) Handler[T] {
	return enqueueController[T](q, owner, func(obj T) string { return obj.GetNamespace() })
}

// EnqueueClusterScopedOwner is EnqueueOwner for an owner kind that is
// cluster-scoped: it adds the controller's key with no namespace, which
// is the key a cluster-scoped informer's lister finds
// (TestEnqueueClusterScopedOwnerAddsTheOwnersKeyWithNoNamespace).
func EnqueueClusterScopedOwner[T informer.Object](q Enqueuer, owner schema.GroupKind) Handler[T] {
	return enqueueController[T](q, owner, func(T) string { return "" })
}

// enqueueController is EnqueueOwner with the owner's namespace given by
// namespace.
func enqueueController[T informer.Object](q Enqueuer, owner schema.GroupKind, namespace func(T) string) Handler[T] {
	if owner.Kind == "" {
		return nil
	}
	return EnqueueMapped(q, func(obj T) []informer.Key {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != owner.Kind {
			return nil
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != owner.Group {
			return nil
		}
		return []informer.Key{{Namespace: namespace(obj), Name: ref.Name}}
	})
}

// EnqueueMapped adds the keys toKeys returns for the object: the handler
// for objects that are neither the reconciled object nor owned by it
// (controller-runtime's Watches with a map function), such as every
// Deployment that mounts a changed ConfigMap. On an update it maps the old
// and the new object and adds both sets (the queue removes duplicates).
// toKeys must be quick and must not modify the object. A nil q or toKeys
// gives a nil Handler, which AddEventHandler rejects.
func EnqueueMapped[T informer.Object](q Enqueuer, toKeys func(obj T) []informer.Key) Handler[T] {
	if nilcheck.IsNil(q) || toKeys == nil {
		return nil
	}
	add := func(obj T) {
		for _, key := range toKeys(obj) {
			q.Add(key)
		}
	}
	return HandlerFuncs[T]{
		AddFunc:    func(obj T, _ bool) { add(obj) },
		UpdateFunc: func(old, obj T) { add(old); add(obj) },
		DeleteFunc: func(obj T, _ bool) { add(obj) },
	}
}
