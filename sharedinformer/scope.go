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

// checkScope refuses a namespace for a cluster-scoped resource, asked
// only when a namespace is given. A resource neither discovery nor the
// RESTMapper knows (a CRD not installed yet) passes: its informer asks
// discovery again when its requests get 404 (see Options.Served).
func (f *Factory) checkScope(ctx context.Context, goType reflect.Type, gvr schema.GroupVersionResource, namespace string) error {
	if namespace == "" {
		return nil
	}
	scope, err := f.scopeNow(ctx, gvr)
	if err != nil {
		return fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if scope == meta.RESTScopeNameRoot {
		return &ScopeError{Type: goType, Resource: gvr, Namespace: namespace, Scope: scope}
	}
	return nil
}

// scopeNow is gvr's scope by discovery, never by what the RESTMapper read
// before: a CRD deleted and created again may have changed its scope
// either way. "Namespaced" may come from the answer the served checks
// share (a second old at most); "cluster-scoped", which refuses, from
// an answer asked now. Where discovery cannot tell (a failed request) or
// does not list gvr (a CRD not installed yet, or a caller's Mapper that
// knows more than discovery), the mapper's scope stands (mapperScope);
// "" for a resource neither knows, but an error where discovery could not
// tell and the mapper does not know: the mapper may have been built from
// that same failed discovery
// (TestANamespaceForAClusterScopedResourceIsRefusedWhileItsGroupsDiscoveryFails). When discovery said "cluster-scoped"
// and asking again failed, the mapper is reset first: what it read
// before is older than that answer, and may be the scope the CRD had
// before it was created again.
func (f *Factory) scopeNow(ctx context.Context, gvr schema.GroupVersionResource) (meta.RESTScopeName, error) {
	r, listed, askErr := f.served.describe(ctx, gvr, false)
	saidRoot := askErr == nil && listed && !r.namespaced
	if saidRoot {
		r, listed, askErr = f.served.describe(ctx, gvr, true)
	}
	switch {
	case askErr == nil && listed && r.namespaced:
		return meta.RESTScopeNameNamespace, nil
	case askErr == nil && listed:
		f.markIfTheMapperDisagrees(gvr, r)
		return meta.RESTScopeNameRoot, nil
	}
	if err := f.lookups.take(ctx); err != nil {
		return "", err
	}
	defer f.lookups.give()
	confirm := true // a "cluster-scoped" of the mapper's is asked again of a reset one
	switch {
	case saidRoot:
		f.forget(ctx, gvr.Group)
	case askErr == nil:
		f.freshMapperFor(ctx, gvr.Group) // not listed: a served check's "no" may concern gvr
	case f.stale.marked(gvr.Group):
		f.freshMapper(ctx) // discovery fails, and a served check found the mapper stale about this group
	default:
		// Discovery of gvr's group fails, and no served check marked
		// it: the mapper as it is, whatever another group's mark, its
		// "cluster-scoped" too; a reset for gvr's group's sake would
		// drop what it knew of that group, for every later caller
		// (TestAStaleMarkDoesNotDropWhatTheMapperKnewWhileItsGroupsDiscoveryFails,
		// TestAClusterScopedAnswerDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup).
		confirm = false
	}
	scope, err := f.mapperScope(ctx, gvr, confirm)
	if err == nil && askErr != nil && (scope == "" || !saidRoot && scope == meta.RESTScopeNameRoot) {
		// The mapper read the same discovery that just failed: its "I do
		// not know it" is no answer either, and its "cluster-scoped" may
		// be a CRD's from before it was created again: a ScopeError says
		// the caller erred, which only discovery can say
		// (TestAScopeErrorDuringAnOutageIsNotTheMappersMemoryOfADeletedCRD).
		return "", fmt.Errorf("discovery could not be asked, so its scope was not checked: %w", askErr)
	}
	return scope, err
}

// mapperScope is gvr's scope by the RESTMapper, "" for a resource it
// does not know; the caller holds the lookup turn. The mapper remembers
// what it read, so with confirm a "cluster-scoped" answer is asked again
// of a reset mapper: a ScopeError is the server's answer now.
func (f *Factory) mapperScope(ctx context.Context, gvr schema.GroupVersionResource, confirm bool) (meta.RESTScopeName, error) {
	scope, err := f.scopeOf(ctx, gvr)
	if err == nil && scope == meta.RESTScopeNameRoot && confirm {
		f.forget(ctx, gvr.Group)
		scope, err = f.scopeOf(ctx, gvr)
	}
	return scope, err
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
