package sharding

// The member Leases the polls cannot list: read by name when a takeover
// or a collection meets one (see seeUnlisted), and judged by version.

import (
	"context"
	"errors"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// errUnseen is takeOver's answer when its create met a Lease the polls
// did not list, now read by name (seeUnlisted): not taken, and not
// found alive either.
var errUnseen = errors.New("sharding: the member's Lease was there unlisted; read by name, judged again")

// seeUnlisted reads member id's Lease by name, for a takeover that met
// it where the polls saw none (its create was answered AlreadyExists), or
// saw it change (its guarded write was answered 409 or 404). The polls
// find a ring's Leases by their two labels; a Lease whose labels someone
// changed is there to every read by name and to none of them. A member
// writes both labels with each of its writes, but whoever changed them
// may change them again after each, so such a Lease says nothing of its
// member's life but by its version: it is recorded as unlisted (see
// observation.unlisted), judged from now as any Lease the polls see,
// and taken over, labels put back, only once that version has gone
// unchanged for its duration; a write of its member meanwhile makes the
// takeover fail, and the wait begins again
// (TestADeadMembersLeaseStrippedOfItsRingLabelsIsFoundAgainAndItsObjectsMove,
// TestALiveMemberWhoseLabelsAreStrippedAfterEachWriteIsNotTakenOver).
// A Lease that carries both labels is left to the polls, and one gone is
// absent from now. Its name is this ring's and this member's alone
// (LeaseName), whatever its labels say.
func (m *members) seeUnlisted(ctx context.Context, id string) error {
	lease, err := m.read(ctx, id)
	if err != nil {
		return err
	}
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.leases[id]
	switch {
	case lease == nil || m.listed(lease, id):
		// Gone, or listed again (the next poll records it). Either way
		// the Lease was there a moment ago, where the last judgement
		// had it absent or at an older version: its absence counts from
		// now, as a poll's does, so a member that puts its deleted Lease
		// back has the time it needs
		// (TestALiveMemberWhoseUnlistedLeaseIsDeletedBeforeItIsReadIsNotTakenOver).
		m.leases[id] = observation{holder: old.holder, duration: old.duration, at: now}
	default:
		m.recordRead(id, lease, now)
	}
	return nil
}

// rereadDead reads by name the Lease of member id, dead for certain,
// whose delete, guarded by the version judged, met another (409).
// Polls may not list it (its labels changed: see seeUnlisted), and then
// nothing else would bring the version a delete needs, and the Lease
// would never be collected
// (TestATakenOverLeaseStrippedOfItsLabelsAgainStaysDeadForCertain).
// Gone, the member is forgotten; there, its version is recorded, and
// the next pass deletes it by that.
func (m *members) rereadDead(ctx context.Context, id string) error {
	lease, err := m.read(ctx, id)
	if err != nil {
		return err
	}
	if lease == nil {
		m.forget(id)
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recordRead(id, lease, m.clock.Now())
	return nil
}

// read reads member id's Lease by name: nil if there is none.
func (m *members) read(ctx context.Context, id string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := m.client.Get().Namespace(m.namespace).Resource("leases").Name(LeaseName(m.ring, id)).Do(ctx).Into(lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return lease, nil
}

// listed reports whether lease carries both labels by which a poll
// finds member id's Lease.
func (m *members) listed(lease *coordinationv1.Lease, id string) bool {
	return lease.Labels[LeaseRingLabel] == m.ring && lease.Labels[LeaseMemberLabel] == id
}

// recordRead records lease, read by name, as member id's latest
// version, seen at now; unlisted if a poll cannot list it. m.mu must be
// held.
func (m *members) recordRead(id string, lease *coordinationv1.Lease, now time.Time) {
	m.record(id, lease, now)
	o := m.leases[id]
	o.unlisted = !m.listed(lease, id)
	m.leases[id] = o
}
