package sharedinformer

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resolveResource finds the resource an informer of T lists: from T's
// kind in the scheme, through the RESTMapper (the server's discovery), or,
// when the caller named one with ForResource, checks that one against T.
//
// Nothing here is a table or a guess such as "lowercase plus s": Ingress
// is served as "ingresses", Endpoints as "endpoints", and a CRD as
// whatever plural its author chose, so only the server can tell.
func (f *Factory) resolveResource(ctx context.Context, goType reflect.Type, explicit schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	if goType == reflect.TypeFor[*unstructured.Unstructured]() || goType == reflect.TypeFor[*metav1.PartialObjectMetadata]() {
		if explicit.Empty() {
			return explicit, fmt.Errorf("sharedinformer: an informer of %v needs ForResource: the Go type does not say which resource it holds", goType)
		}
		return explicit, nil
	}
	gvk, err := f.kindOf(goType, explicit.GroupVersion())
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	if !explicit.Empty() {
		return explicit, f.checkResource(ctx, goType, gvk, explicit)
	}
	mapping, err := f.mapping(ctx, gvk)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return mapping.Resource, nil
}

// servedKind is the kind an informer of goType decodes in gv, for its
// served check; "" for one that takes any kind (unstructured, metadata
// only) or a type the scheme does not know in gv.
func (f *Factory) servedKind(goType reflect.Type, gv schema.GroupVersion) string {
	if goType == reflect.TypeFor[*unstructured.Unstructured]() || goType == reflect.TypeFor[*metav1.PartialObjectMetadata]() {
		return ""
	}
	gvk, err := f.kindOf(goType, gv)
	if err != nil {
		return ""
	}
	return gvk.Kind
}

// kindOf is T's group, version and kind in the factory's scheme; in gv
// when the caller named a resource, otherwise the scheme's first.
func (f *Factory) kindOf(goType reflect.Type, gv schema.GroupVersion) (schema.GroupVersionKind, error) {
	if f.opts.Scheme == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("sharedinformer: an informer of %v needs FactoryOptions.Scheme (for example corev1.AddToScheme on a runtime.NewScheme())", goType)
	}
	if goType.Kind() != reflect.Pointer || goType.Elem().Kind() != reflect.Struct {
		return schema.GroupVersionKind{}, fmt.Errorf("sharedinformer: the informer's type must be a pointer to a struct, such as *corev1.Pod; got %v", goType)
	}
	kinds, _, err := f.opts.Scheme.ObjectKinds(reflect.New(goType.Elem()).Interface().(runtime.Object))
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("sharedinformer: %v is not in FactoryOptions.Scheme: add its group with its package's AddToScheme, or, for a type of your own, scheme.AddKnownTypes(gv, &T{}, &TList{}) and metav1.AddToGroupVersion(scheme, gv) (examples/08-custom-resource)", goType)
	}
	if gv.Empty() {
		return kinds[0], nil
	}
	for _, k := range kinds {
		if k.GroupVersion() == gv {
			return k, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("sharedinformer: the scheme knows %v as %v, not in %s", goType, kinds, gv)
}

// checkResource checks an explicit resource against T's kind, by
// discovery as it answers now: the kind its group version lists for gvr
// is the verdict, whatever the RESTMapper remembers (a CRD deleted and
// created again may hold another kind under the same plural; a mapper
// built from a partial discovery may not know the group at all:
// TestAForResourceKindCheckIsNotSkippedAfterAPastPartialDiscovery,
// TestAForResourceKindCheckSeesACRDRecreatedWithAnotherKind). A refusal
// is asked again, fresh, first. What discovery does not list (a misspelt
// name, or a CRD not installed yet) is asked of the mapper, reset first:
// a misspelling it can name is refused, and the rest passes, since a CRD
// may be installed later (the informer reports the 404s meanwhile, and
// NotSyncedError says so). Where discovery could not be asked the
// mapper's answer stands, but its "I do not know it" is an error: it may
// have been built from the discovery that just failed
// (TestAForResourceKindCheckDoesNotPassWhileItsGroupsDiscoveryFails).
func (f *Factory) checkResource(ctx context.Context, goType reflect.Type, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource) error {
	r, listed, askErr := f.served.describe(ctx, gvr, false)
	saidOther := askErr == nil && listed && r.kind != gvk.Kind
	if saidOther {
		r, listed, askErr = f.served.describe(ctx, gvr, true)
	}
	if askErr == nil && listed {
		if r.kind != gvk.Kind {
			f.markIfTheMapperDisagrees(gvr, r)
			return &KindError{Type: goType, Kind: gvk.GroupKind(), Resource: gvr, Holds: schema.GroupKind{Group: gvr.Group, Kind: r.kind}}
		}
		return nil
	}
	if err := f.lookups.take(ctx); err != nil {
		return err
	}
	defer f.lookups.give()
	switch {
	case askErr == nil || saidOther:
		// Discovery does not list gvr now, or listed it holding another
		// kind before asking again failed: what the mapper read is older
		// (TestAForResourceKindDiscoveryJustRefusedIsNotPassedByTheMappersMemoryWhenAskingAgainFails);
		// the reset keeps nothing of gvr's group, even if its discovery
		// fails now.
		f.forget(ctx, gvr.Group)
	case f.stale.marked(gvr.Group):
		f.freshMapper(ctx) // discovery fails, and a served check found the mapper stale about this group
	default:
		// Discovery of gvr's group fails: the mapper as it is, its
		// refusal too. A reset for gvr's group's sake would drop what
		// it knew of that group, for every later caller
		// (TestAStaleMarkDoesNotDropWhatTheMapperKnewWhileItsGroupsDiscoveryFails,
		// TestARefusedForResourceDuringAnOutageDoesNotDropWhatTheMapperKnewOfItsGroup).
	}
	refusal, known, err := f.resourceRefusal(ctx, goType, gvk, gvr)
	switch {
	case err != nil:
		return err
	case refusal != nil && askErr != nil && !saidOther:
		// A refusal from what the mapper read before the outage may be
		// a CRD's from before it was created again: a KindError says
		// the caller erred, which only discovery can say
		// (TestAKindErrorDuringAnOutageIsNotTheMappersMemoryOfADeletedCRD).
		return fmt.Errorf("sharedinformer: resource %s: discovery could not be asked, so the kind it holds was not checked (what the RESTMapper read before refuses it: %v): %w", gvr.GroupResource(), refusal, askErr)
	case refusal != nil:
		return refusal
	case !known && askErr != nil:
		return fmt.Errorf("sharedinformer: resource %s: discovery could not be asked, so the kind it holds was not checked: %w", gvr.GroupResource(), askErr)
	}
	return nil
}

// resourceRefusal is why the mapper says gvr cannot hold T's kind: a
// misspelt resource, or one of another kind; nil when it can, or when
// the mapper does not know gvr (known is false then). err is a failure
// to ask. The caller holds the lookup turn.
func (f *Factory) resourceRefusal(ctx context.Context, goType reflect.Type, gvk schema.GroupVersionKind, gvr schema.GroupVersionResource) (refusal error, known bool, err error) {
	served, err := f.mapper.ResourceForWithContext(ctx, gvr)
	if meta.IsNoMatchError(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if served.Resource != gvr.Resource {
		return fmt.Errorf("sharedinformer: %q is not the name of a resource (did you mean %q?): the API server's names are plural and lowercase", gvr.Resource, served.Resource), true, nil
	}
	kind, err := f.mapper.KindForWithContext(ctx, served)
	if err != nil {
		return nil, false, fmt.Errorf("sharedinformer: resource %s: %w", gvr.GroupResource(), err)
	}
	if kind.GroupKind() != gvk.GroupKind() {
		return &KindError{Type: goType, Kind: gvk.GroupKind(), Resource: gvr, Holds: kind.GroupKind()}, true, nil
	}
	return nil, true, nil
}

// freshMapper resets the RESTMapper if a served check has found a
// resource not served since the last reset: the mapper may still map it.
// What it knew of every marked group goes, even where that group's
// discovery fails now: the mark says it may be wrong
// (TestAStaleMarkSpentByAnotherGroupsLookupStillDropsItsGroupWhileItsDiscoveryFails).
// The caller holds the lookup turn, as for every use of the mapper.
func (f *Factory) freshMapper(ctx context.Context) {
	if groups := f.stale.takeAll(); len(groups) > 0 {
		f.forget(ctx, groups...)
	}
}

// freshMapperFor is freshMapper for a lookup in group: it resets the
// mapper only if a served check marked group. Another group's mark waits
// for a lookup of its own: a reset now would drop what the mapper knew
// of the marked group, whose discovery may be failing
// (TestAnUnrelatedStaleMarkDoesNotFailATypeLookupTheMapperKnewWhileItsGroupsDiscoveryFails).
func (f *Factory) freshMapperFor(ctx context.Context, group string) {
	if f.stale.marked(group) {
		f.freshMapper(ctx)
	}
}

// mapping asks the RESTMapper for gvk's resource. The mapper keeps what
// it read of discovery until it is reset, so on a miss it forgets and
// asks once more (a CRD installed since the first lookup is found), and
// on a hit it asks discovery whether the resource is listed now, with
// gvk's kind, and forgets and asks once more if not (a CRD deleted, or
// created again with another kind, since is not found:
// no served check resets the mapper for a resource no informer watches).
// A mapper that cannot forget, or maps the kind all the same, has the
// last word.
func (f *Factory) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if err := f.lookups.take(ctx); err != nil {
		return nil, err
	}
	defer f.lookups.give()
	f.freshMapperFor(ctx, gvk.Group)
	m, err := f.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		// Asked again of discovery, a CRD installed since is found. Not
		// knowing the kind says nothing against what the mapper knew of
		// its group, which a reset keeps where the group's discovery
		// fails
		// (TestAKindNotServedDuringItsGroupsOutageKeepsWhatTheMapperKnewOfTheGroup).
		f.forget(ctx)
		m, err = f.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	case err == nil && !f.listedAs(ctx, m.Resource, gvk.Kind):
		f.forget(ctx, gvk.Group) // the mapper's answer is contradicted: drop its group
		m, err = f.mapper.RESTMappingWithContext(ctx, gvk.GroupKind(), gvk.Version)
	}
	if meta.IsNoMatchError(err) {
		// The mapper may have been built from a discovery of gvk's group
		// that failed: say so, not "not installed"
		// (TestAKindLookupDuringAFailedGroupDiscoveryNamesTheFailure).
		if _, _, askErr := f.served.describe(ctx, gvk.GroupVersion().WithResource(""), false); askErr != nil {
			return nil, fmt.Errorf("sharedinformer: finding the resource of kind %s: discovery of %s could not be asked: %w", gvk.Kind, gvk.GroupVersion(), askErr)
		}
		if km, ok := f.mapper.(*keepingMapper); ok {
			if listErr := km.groupListFailure(); listErr != nil {
				return nil, fmt.Errorf("sharedinformer: finding the resource of kind %s: the list of API groups could not be read: %w", gvk.Kind, listErr)
			}
		}
		msg := fmt.Sprintf("sharedinformer: the API server serves no resource of kind %s in %s (is its CRD installed?)", gvk.Kind, gvk.GroupVersion())
		if near := f.nearestKind(ctx, gvk.Kind); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", near)
		}
		return nil, fmt.Errorf("%s: %w", msg, err)
	}
	if err != nil {
		return nil, fmt.Errorf("sharedinformer: finding the resource of kind %s: %w", gvk, err)
	}
	return m, nil
}

// listedAs reports whether discovery lists gvr now, holding kind (a CRD
// created again may hold another kind under the same plural:
// TestAKindLookupSeesACRDRecreatedWithAnotherKind); a discovery that
// cannot tell (any failure but a 404) counts as yes, so the mapper's
// answer stands.
func (f *Factory) listedAs(ctx context.Context, gvr schema.GroupVersionResource, kind string) bool {
	r, listed, err := f.served.describe(ctx, gvr, false)
	return err != nil || listed && r.kind == kind
}

// nearestKind is the served kind closest in spelling to kind, as
// "Kind (resource.group/version)", or "" when none is close (an edit
// distance above 2, case ignored) or discovery is not at hand.
func (f *Factory) nearestKind(ctx context.Context, kind string) string {
	if f.discovery == nil {
		return ""
	}
	lists, _ := f.discovery.ServerPreferredResourcesWithContext(ctx) // partial answers are still useful
	best, bestDistance := "", 3
	for _, list := range lists {
		for _, r := range list.APIResources {
			if d := editDistance(strings.ToLower(kind), strings.ToLower(r.Kind)); d < bestDistance {
				best, bestDistance = fmt.Sprintf("%s (%s in %s)", r.Kind, r.Name, list.GroupVersion), d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
