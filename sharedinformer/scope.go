package sharedinformer

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ScopeError is InformerFor's error when it is given a namespace
// (InNamespace) for a resource that has none: a cluster-scoped one, such
// as Nodes or Namespaces. Such an informer would LIST
// /api/v1/namespaces/x/nodes and get 404 for ever.
type ScopeError struct {
	Type      reflect.Type                // the informer's Go type, such as *v1.Node
	Resource  schema.GroupVersionResource // the resource it was asked for
	Namespace string                      // the namespace given
	Scope     meta.RESTScopeName          // the resource's scope, from discovery: meta.RESTScopeNameRoot
}

// Error names the type, the resource, its scope and the namespace given.
func (e *ScopeError) Error() string {
	return fmt.Sprintf("sharedinformer: informer of %v: %s is cluster-scoped: it has no namespaces, so InNamespace(%q) cannot apply; ask without it for the whole cluster",
		e.Type, e.Resource.GroupResource(), e.Namespace)
}

// checkScope refuses a namespace for a cluster-scoped resource. The scope
// is the RESTMapper's (the server's discovery), asked only when a
// namespace is given. A resource discovery does not know (a CRD not
// installed yet) passes: its informer reports the 404s meanwhile.
func (f *Factory) checkScope(ctx context.Context, goType reflect.Type, gvr schema.GroupVersionResource, namespace string) error {
	if namespace == "" {
		return nil
	}
	kind, err := f.mapper.KindForWithContext(ctx, gvr)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	mapping, err := f.mapper.RESTMappingWithContext(ctx, kind.GroupKind(), kind.Version)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if scope := mapping.Scope.Name(); scope != meta.RESTScopeNameNamespace {
		return &ScopeError{Type: goType, Resource: gvr, Namespace: namespace, Scope: scope}
	}
	return nil
}
