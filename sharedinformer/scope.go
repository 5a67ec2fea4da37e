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
// installed yet) passes: its informer asks discovery again when its
// requests get 404 (see Options.Served). The mapper remembers what it
// read, and a CRD deleted and created again may have changed its scope,
// so a "cluster-scoped" answer is asked again of a reset mapper before it
// refuses: a ScopeError is always the server's answer now.
func (f *Factory) checkScope(ctx context.Context, goType reflect.Type, gvr schema.GroupVersionResource, namespace string) error {
	if namespace == "" {
		return nil
	}
	f.freshMapper(ctx)
	scope, err := f.scopeOf(ctx, gvr)
	if err == nil && scope == meta.RESTScopeNameRoot {
		f.forget(ctx)
		scope, err = f.scopeOf(ctx, gvr)
	}
	if err != nil {
		return fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if scope == meta.RESTScopeNameRoot {
		return &ScopeError{Type: goType, Resource: gvr, Namespace: namespace, Scope: scope}
	}
	return nil
}

// scopeOf is gvr's scope by the mapper, "" for a resource it does not
// know.
func (f *Factory) scopeOf(ctx context.Context, gvr schema.GroupVersionResource) (meta.RESTScopeName, error) {
	kind, err := f.mapper.KindForWithContext(ctx, gvr)
	if meta.IsNoMatchError(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	mapping, err := f.mapper.RESTMappingWithContext(ctx, kind.GroupKind(), kind.Version)
	if meta.IsNoMatchError(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return mapping.Scope.Name(), nil
}
