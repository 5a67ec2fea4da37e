package sharedinformer

import (
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// staleGroups are the API groups in which a served check found a
// resource not served in its version since the RESTMapper was last
// reset: the mapper may still map it. The next lookup in a marked group
// resets the mapper first (Factory.freshMapperFor), on its caller's
// goroutine; a lookup in another group leaves the mapper as it is (that
// group's discovery may be failing, and a reset drops what the mapper
// knew of every marked group), but one in a marked group does not
// trust it
// (TestAForResourceKindCheckIsNotPassedByAMapperAServedCheckFoundStaleWhileDiscoveryFails,
// TestAStaleMarkDoesNotDropWhatTheMapperKnewWhileItsGroupsDiscoveryFails).
type staleGroups struct {
	mu     sync.Mutex
	groups map[string]bool // guarded by mu
}

// mark records that the mapper may be stale about group.
func (s *staleGroups) mark(group string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string]bool{}
	}
	s.groups[group] = true
}

// marked reports whether group is marked.
func (s *staleGroups) marked(group string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groups[group]
}

// takeAll clears every mark, for a reset of the mapper, and returns the
// groups marked, which that reset must not keep (keepingMapper).
func (s *staleGroups) takeAll() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	groups := slices.Collect(maps.Keys(s.groups))
	s.groups = nil
	return groups
}

// markIfTheMapperDisagrees marks gvr's group stale if the RESTMapper
// remembers gvr otherwise than discovery has just listed it, r: another
// kind, or another scope (a CRD made again). Marked, the group is
// dropped at its next lookup, not carried over a reset while its
// discovery fails
// (TestAKindErrorDiscoveryGaveIsNotForgottenByAResetThatCarriesTheGroupOver,
// TestAScopeErrorDiscoveryGaveIsNotForgottenByAResetThatCarriesTheGroupOver,
// TestAScopeErrorGivenWhileTheTurnIsBusyIsNotForgotten). A mapper that
// agrees, or does not know gvr, is left alone: a caller's mistake must
// not cost a rebuild, nor drop a group its outage needs
// (TestAKindMistakeJustBeforeAnOutageKeepsWhatTheMapperKnew,
// TestAScopeMistakeJustBeforeAnOutageKeepsWhatTheMapperKnew). The
// factory's own mapper judges it (keepingMapper.judge), without the
// lookup turn and without building; a caller's Mapper, which cannot,
// is taken to disagree.
func (f *Factory) markIfTheMapperDisagrees(gvr schema.GroupVersionResource, r listedResource) {
	km, ok := f.mapper.(*keepingMapper)
	if !ok {
		f.stale.mark(gvr.Group)
		return
	}
	km.judge(gvr, r) // marks through f.stale.mark, told at NewFactory
}
