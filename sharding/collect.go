package sharding

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	informer "github.com/listwatch/informer"
)

// collectLeases deletes the Leases of members dead for certain (released,
// or taken over) that no object is labelled with any more. A member id serves one term, so a dead member
// never renews again and its Lease is only clutter, which every sharder
// candidate would list on every poll forever. The delete carries the
// resourceVersion that was judged dead: if the Lease changed since, the
// API server refuses it (409), the Lease is read again by name
// (rereadDead: the polls may not list it), and the next pass deletes it
// by the version read, if it still names another holder than its
// member. Each delete is bounded like every request of the sharder: one
// that hangs must not stop the loop that watches the members.
func (s *Sharder) collectLeases(ctx context.Context, resources []*resource) {
	dead := s.members.dead()
	if len(dead) == 0 {
		return
	}
	for id := range s.namedMembers(resources) {
		delete(dead, id) // still owns an object: not yet
	}
	for id, rv := range dead {
		rctx, cancel := informer.WithTimeout(ctx, s.cfg.Clock, s.members.timeout)
		err := s.cfg.LeaseClient.Delete().Namespace(s.cfg.LeaseNamespace).Resource("leases").Name(LeaseName(s.cfg.Ring, id)).
			Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}).Do(rctx).Error()
		cancel()
		switch {
		case err == nil || apierrors.IsNotFound(err):
			s.members.forget(id) // gone for good: an object naming it later is judged afresh
		case apierrors.IsConflict(err):
			rctx, cancel := informer.WithTimeout(ctx, s.cfg.Clock, s.members.timeout)
			if err := s.members.rereadDead(rctx, id); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("sharding: reading a dead member's Lease again", "member", id, "err", err)
			}
			cancel()
		case ctx.Err() != nil:
		default:
			s.cfg.Logger.Warn("sharding: deleting a dead member's Lease", "member", id, "err", err)
		}
	}
}

// namedMembers returns the members some object in the sharder's caches
// is labelled with (its owner, draining or not).
func (s *Sharder) namedMembers(resources []*resource) map[string]bool {
	shard := Shard{Ring: s.cfg.Ring}
	named := map[string]bool{}
	for _, r := range resources {
		for _, obj := range r.objects.Lister().List(nil) {
			if id := obj.Labels[shard.Label()]; id != "" {
				named[id] = true
			}
		}
	}
	return named
}
