package fakeapiserver

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// InstallCRD starts serving a custom resource, as creating its
// CustomResourceDefinition does: its paths answer, and discovery lists
// it; its watch cache starts now, past the resourceVersion of the CRD's
// own write, so a WATCH from any resourceVersion read before (one read
// before a RemoveCRD, or just before the install) expires
// (TestConformanceWatchFromJustBeforeTheCRDWasCreated). Installing
// one whose group and plural are served already is an error.
func (s *Server) InstallCRD(c CRD) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	res := c.resource()
	if _, ok := s.resources[res.GroupResource()]; ok {
		return fmt.Errorf("fakeapiserver: %s is served already", res.GroupResource())
	}
	s.resources[res.GroupResource()] = res
	s.rv++ // the CRD's own write: no resourceVersion read before it is the new cache's
	s.cacheStart[res.GroupResource()] = s.rv
	return nil
}

// RemoveCRD stops serving a custom resource, as deleting its
// CustomResourceDefinition does: first every object of it is deleted
// (each a DELETED event, at a resourceVersion of its own), then its open
// watches end, then its paths answer 404 and discovery no longer lists
// it. It returns how many objects it deleted.
func (s *Server) RemoveCRD(gr schema.GroupResource) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.resources[gr]
	if !ok || !res.Custom {
		return 0, fmt.Errorf("fakeapiserver: no custom resource %s", gr)
	}
	state := s.current[gr]
	keys := sortedKeys(state)
	for _, k := range keys {
		s.commitLocked(gr, deleted, state[k].DeepCopy())
	}
	s.endWatchesOfLocked(gr)
	delete(s.resources, gr)
	delete(s.cacheStart, gr)
	return len(keys), nil
}

// MoveCRD serves a custom resource at another version instead of its
// current one, as changing the served version of its
// CustomResourceDefinition does: its objects stay, now read with
// apiVersion <group>/<version>; the old version's paths answer 404 and
// vanish from discovery; its open watches end, as kube-apiserver ends
// them when it rebuilds the resource's storage, and its watch cache
// starts again: a WATCH from an older resourceVersion expires.
func (s *Server) MoveCRD(gr schema.GroupResource, version string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.resources[gr]
	if !ok || !res.Custom {
		return fmt.Errorf("fakeapiserver: no custom resource %s", gr)
	}
	res.Version = version
	s.resources[gr] = res
	s.rv++ // the CRD's own write, as in InstallCRD
	s.cacheStart[gr] = s.rv
	s.endWatchesOfLocked(gr)
	return nil
}

// endWatchesOfLocked ends the open watches of one resource once they
// have written the events already queued (a removed resource's DELETED
// events among them).
func (s *Server) endWatchesOfLocked(gr schema.GroupResource) {
	for wt := range s.watchers {
		if wt.gr == gr {
			wt.finish()
			delete(s.watchers, wt)
		}
	}
}

// errNoLongerServed is an operation's error when its resource stopped
// being served (its CRD removed, or moved to another version) after the
// request was routed to it: the request is answered as one for a path
// that serves nothing, a 404, as kube-apiserver answers once the CRD is
// gone. Without this check a WATCH routed just before a removal was
// registered after it, and never ended by it.
var errNoLongerServed = errors.New("fakeapiserver: the resource is no longer served")

// stillServedLocked checks that res, as the request was routed to it,
// is still what the server serves. The caller holds s.mu, and does the
// operation under the same hold.
func (s *Server) stillServedLocked(res Resource) error {
	if now, ok := s.resources[res.GroupResource()]; !ok || now != res {
		return errNoLongerServed // removed, moved, or installed again with another kind or scope
	}
	return nil
}
