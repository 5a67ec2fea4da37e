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

// checkScope refuses a namespace for a cluster-scoped resource. The
// scope is discovery's answer now (describe: no older than a second,
// shared with the served checks), asked only when a namespace is given,
// never the RESTMapper's memory: a CRD deleted and created again may have
// changed its scope either way. A resource discovery does not list (a
// CRD not installed yet) passes: its informer asks discovery again when
// its requests get 404 (see Options.Served).
func (f *Factory) checkScope(ctx context.Context, goType reflect.Type, gvr schema.GroupVersionResource, namespace string) error {
	if namespace == "" {
		return nil
	}
	listed, namespaced, err := f.served.describe(ctx, gvr)
	if err != nil {
		return fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if listed && !namespaced {
		return &ScopeError{Type: goType, Resource: gvr, Namespace: namespace, Scope: meta.RESTScopeNameRoot}
	}
	return nil
}
