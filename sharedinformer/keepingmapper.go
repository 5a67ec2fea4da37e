package sharedinformer

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/restmapper"
)

// keepingMapper is the factory's RESTMapper when the caller gives none:
// client-go's discovery RESTMapper (restmapper.NewDiscoveryRESTMapper),
// built from discovery on first use and again after each reset, as
// client-go's DeferredDiscoveryRESTMapper is, with one difference: a
// reset keeps what the mapper knew of a group whose discovery fails.
//
// The problem it solves: a reset rebuilds the mapper whole, from one
// fresh read of discovery, however many groups the reset was for. A
// group version whose request fails at that moment (a 503 from an
// aggregated API server, a version aggregated discovery marks stale, a
// request cut short by its caller's context) is left out of client-go's
// build without an error, so a reset for one group's sake (a CRD not
// installed yet in group A) made the mapper forget group B, which it
// knew a moment before, until B's discovery answered again
// (TestAResetForAnotherGroupKeepsWhatTheMapperKnewOfAGroupWhoseDiscoveryFails).
//
// A build here carries over, for each group version whose discovery
// failed, the resources the previous build had for it; a 404 is no
// failure but an answer (the version is gone), and is not carried over.
// A reset names the groups it doubts, whose entries it drops at once:
// the group of a lookup discovery contradicted, the groups a served
// check marked stale. Those are never carried over, since what the
// mapper knew of them is what the reset was for
// (TestAForResourceKindDiscoveryJustRefusedIsNotPassedByTheMappersMemoryWhenAskingAgainFails,
// TestAStaleMarkSpentByAnotherGroupsLookupStillDropsItsGroupWhileItsDiscoveryFails).
// So a carried-over entry answers only what the mapper, had it not been
// reset, would have answered: the factory's rules for a group whose
// discovery fails (a refusal or an "I do not know it" of the mapper's is
// "discovery could not be asked") apply to it as to any memory of the
// mapper's.
//
// Locking: the factory uses it only while holding its lookup turn (see
// lookupTurn), one caller at a time; mu makes it safe without the turn
// too, but is held for a whole build, discovery requests included, where
// no waiting caller's context reaches: take the turn first.
type keepingMapper struct {
	discovery discovery.CachedDiscoveryInterfaceWithContext

	mu sync.Mutex
	// built is the mapper of the last build, or nil: none since the last
	// reset, so the next use builds one. Guarded by mu.
	built meta.RESTMapperWithContext
	// known is what built was built from, carried over entries included,
	// less the groups a reset since has doubted: where a build finds
	// the entries to carry over. Written under mu, as a new slice each
	// time; read without it by judge, which must not wait for a
	// build's discovery requests.
	known atomic.Pointer[[]*restmapper.APIGroupResources]
	// judging guards building and pending: a refusal judged while a build
	// is under way (it may have read discovery the refusal contradicts,
	// and not stored it in known yet) waits in pending, and the build
	// judges it once it has stored what it read. Taken under mu by a
	// build, never the other way round.
	judging  sync.Mutex
	building bool
	pending  []refusal
	// disagreed is told the group of a refusal the mapper remembers
	// otherwise (the factory marks it stale).
	disagreed func(group string)
	// listFailed is why the list of groups could not be read at the last
	// try, while the mapper answers from known; nil once a build
	// succeeds. Guarded by mu.
	listFailed error
}

var _ meta.RESTMapperWithContext = (*keepingMapper)(nil)

// newKeepingMapper returns a keepingMapper over dc. It asks nothing yet.
// disagreed is told, perhaps later (see judge), the group of each
// refusal the mapper remembers otherwise.
func newKeepingMapper(dc discovery.CachedDiscoveryInterfaceWithContext, disagreed func(group string)) *keepingMapper {
	return &keepingMapper{discovery: dc, disagreed: disagreed}
}

// refusal is a resource as discovery has just listed it, in a refusal.
type refusal struct {
	gvr    schema.GroupVersionResource
	listed listedResource
}

// reset makes the next use build the mapper afresh, from a discovery
// asked again (dc's cache is invalidated), dropping what it knew of the
// doubted groups: only the other groups are carried over where their
// discovery fails then.
func (m *keepingMapper) reset(ctx context.Context, doubted ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.discovery.InvalidateWithContext(ctx)
	m.built = nil
	kept := slices.DeleteFunc(slices.Clone(m.knownNow()), func(g *restmapper.APIGroupResources) bool {
		return slices.Contains(doubted, g.Group.Name)
	})
	m.known.Store(&kept)
}

// mapper is the mapper built, building it first if there is none. When
// the list of groups cannot be read, it builds nothing (the next use
// tries again) and answers from known, as if every group's discovery
// failed (TestAGroupListOutageDuringAResetForAnotherGroupKeepsWhatTheMapperKnew);
// with nothing known, the error.
func (m *keepingMapper) mapper(ctx context.Context) (meta.RESTMapperWithContext, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.built != nil {
		return m.built, nil
	}
	m.judging.Lock()
	m.building = true
	m.judging.Unlock()
	defer m.judgePending()
	groups, lists, err := m.discovery.ServerGroupsAndResourcesWithContext(ctx)
	failed, partial := discovery.GroupDiscoveryFailedErrorGroups(err)
	if err != nil && !partial {
		known := m.knownNow()
		if len(known) == 0 {
			return nil, err
		}
		m.listFailed = err
		return restmapper.NewDiscoveryRESTMapperWithContext(known), nil
	}
	m.listFailed = nil
	built := groupResources(groups, lists)
	for _, gv := range slices.SortedFunc(maps.Keys(failed), compareGroupVersions) {
		if !apierrors.IsNotFound(failed[gv]) {
			built = carryOver(built, m.knownNow(), gv)
		}
	}
	m.built = restmapper.NewDiscoveryRESTMapperWithContext(built)
	m.known.Store(&built)
	return m.built, nil
}

// knownNow is known as it is now.
func (m *keepingMapper) knownNow() []*restmapper.APIGroupResources {
	if p := m.known.Load(); p != nil {
		return *p
	}
	return nil
}

// judge tells disagreed of gvr's group if the mapper remembers gvr
// otherwise than as r: another kind or scope in any version of its
// group (a CRD has one kind and one scope in all its versions:
// TestAScopeErrorInAnotherVersionThanTheMapperKnowsIsNotForgotten). It
// reads what the mapper was built from (or will carry over), builds
// nothing and waits for no discovery
// (TestAMistakeOnAFreshFactoryDoesNotReadAllOfDiscovery,
// TestARefusalDiscoveryGaveDoesNotWaitForAnotherLookupsHang). While a
// build is under way, whose discovery it cannot see yet, the refusal is
// judged when the build has stored it
// (TestAScopeErrorDuringABuildInFlightIsNotForgotten,
// TestAKindMistakeDuringAnotherCallersBuildKeepsWhatTheMapperKnew).
func (m *keepingMapper) judge(gvr schema.GroupVersionResource, r listedResource) {
	m.judging.Lock()
	defer m.judging.Unlock()
	if m.building {
		// Once each: a refusal retried while the build hangs is judged
		// once (TestARefusalRetriedDuringABuildWaitsToBeJudgedOnce).
		if p := (refusal{gvr, r}); !slices.Contains(m.pending, p) {
			m.pending = append(m.pending, p)
		}
		return
	}
	if remembersOtherwise(m.knownNow(), gvr, r) {
		m.disagreed(gvr.Group)
	}
}

// judgePending ends a build: it judges the refusals given meanwhile
// against what the build stored (or, if it failed, what was known).
func (m *keepingMapper) judgePending() {
	m.judging.Lock()
	defer m.judging.Unlock()
	m.building = false
	known := m.knownNow()
	for _, p := range m.pending {
		if remembersOtherwise(known, p.gvr, p.listed) {
			m.disagreed(p.gvr.Group)
		}
	}
	m.pending = nil
}

// remembersOtherwise reports whether known holds gvr's resource, in any
// version of its group, with another kind or scope than r.
func remembersOtherwise(known []*restmapper.APIGroupResources, gvr schema.GroupVersionResource, r listedResource) bool {
	for _, g := range known {
		if g.Group.Name != gvr.Group {
			continue
		}
		for _, resources := range g.VersionedResources {
			for _, res := range resources {
				if res.Name == gvr.Resource && (res.Kind != r.kind || res.Namespaced != r.namespaced) {
					return true
				}
			}
		}
	}
	return false
}

// groupListFailure is why the list of groups could not be read, if the
// mapper answers from what it knew for that reason: its "I do not know
// that kind" is then no answer
// (TestAGroupListOutageIsNotReportedAsAKindNotServed).
func (m *keepingMapper) groupListFailure() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.listFailed
}

// groupResources arranges discovery's answer by group, as
// restmapper.GetAPIGroupResources does (which drops the failures that
// mapper needs).
func groupResources(groups []*metav1.APIGroup, lists []*metav1.APIResourceList) []*restmapper.APIGroupResources {
	byGV := map[string]*metav1.APIResourceList{}
	for _, l := range lists {
		byGV[l.GroupVersion] = l
	}
	var out []*restmapper.APIGroupResources
	for _, g := range groups {
		r := &restmapper.APIGroupResources{Group: *g, VersionedResources: map[string][]metav1.APIResource{}}
		for _, v := range g.Versions {
			if l, ok := byGV[v.GroupVersion]; ok {
				r.VersionedResources[v.Version] = l.APIResources
			}
		}
		out = append(out, r)
	}
	return out
}

// carryOver adds gv's resources from known to built, and gv to its
// group's versions (aggregated discovery leaves a stale version out of
// them); built unchanged if known has none for gv. It copies the
// versions it extends: they are the discovery cache's.
func carryOver(built, known []*restmapper.APIGroupResources, gv schema.GroupVersion) []*restmapper.APIGroupResources {
	i := slices.IndexFunc(known, func(g *restmapper.APIGroupResources) bool { return g.Group.Name == gv.Group })
	if i < 0 {
		return built
	}
	kept, ok := known[i].VersionedResources[gv.Version]
	if !ok {
		return built
	}
	j := slices.IndexFunc(built, func(g *restmapper.APIGroupResources) bool { return g.Group.Name == gv.Group })
	if j < 0 {
		built = append(built, &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: gv.Group}, VersionedResources: map[string][]metav1.APIResource{}})
		j = len(built) - 1
	}
	g := built[j]
	if !slices.ContainsFunc(g.Group.Versions, func(v metav1.GroupVersionForDiscovery) bool { return v.Version == gv.Version }) {
		g.Group.Versions = append(slices.Clone(g.Group.Versions), metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version})
	}
	if g.Group.PreferredVersion.Version == "" {
		g.Group.PreferredVersion = known[i].Group.PreferredVersion
	}
	g.VersionedResources[gv.Version] = kept
	return built
}

// compareGroupVersions orders group versions by group, then version, so
// that a build's groups come in one order whatever the map's.
func compareGroupVersions(a, b schema.GroupVersion) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version))
}

// The RESTMapper's methods ask the mapper built, building it first.

func (m *keepingMapper) KindForWithContext(ctx context.Context, resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return d.KindForWithContext(ctx, resource)
}

func (m *keepingMapper) KindsForWithContext(ctx context.Context, resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return nil, err
	}
	return d.KindsForWithContext(ctx, resource)
}

func (m *keepingMapper) ResourceForWithContext(ctx context.Context, input schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	return d.ResourceForWithContext(ctx, input)
}

func (m *keepingMapper) ResourcesForWithContext(ctx context.Context, input schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return nil, err
	}
	return d.ResourcesForWithContext(ctx, input)
}

func (m *keepingMapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return nil, err
	}
	return d.RESTMappingWithContext(ctx, gk, versions...)
}

func (m *keepingMapper) RESTMappingsWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return nil, err
	}
	return d.RESTMappingsWithContext(ctx, gk, versions...)
}

func (m *keepingMapper) ResourceSingularizerWithContext(ctx context.Context, resource string) (string, error) {
	d, err := m.mapper(ctx)
	if err != nil {
		return "", err
	}
	return d.ResourceSingularizerWithContext(ctx, resource)
}
