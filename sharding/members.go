package sharding

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
)

// members judges which members of a ring are alive, from their shard
// Leases, on this process's clock. A member is alive while its Lease has
// it as holder and has changed within its leaseDurationSeconds since this
// observer first saw its current version: the rule a leader election
// standby applies (see leaderelection's "Clocks"), and for the same
// reason — renewTime was written by another host's clock.
//
// "Not seen alive" is never "dead". A member is dead for certain only
// when its Lease says so (released by the member, or held by someone
// else: taken over), and a Lease that merely went unchanged for its
// duration, or vanished, or was never seen, is taken over first (see
// takeOver): a write guarded by the resourceVersion judged, which a
// member that still renews makes fail. One that vanished and owns no
// object is forgotten instead (see takeOverSuspects).
//
// It keeps only observations, never decisions: a new sharder builds its
// own from the Leases, and that is all the state there is. A standby
// (a sharder not leading) keeps only what its last poll listed, as a
// sharder started then would: what it saw of members gone would grow
// with their churn for its process's life, and once elected it would
// take over (create) the Leases of members long gone
// (TestAStandbyElectedCreatesNoLeaseForMembersThatLeftWhileItStoodBy).
type members struct {
	client    *rest.RESTClient
	namespace string
	ring      string
	clock     informer.Clock
	fallback  time.Duration // for a Lease that names no duration
	timeout   time.Duration // bounds each request

	mu     sync.Mutex
	leases map[string]observation // guarded by mu; by member id
	writes uint64                 // guarded by mu; takeovers and forgets so far
	// forgot holds, by member id, the writes count at which forget
	// dropped a member, until a poll sent after it answers: a poll sent
	// before would bring the member back from the Lease it listed.
	forgot map[string]uint64 // guarded by mu
	// refused holds, by member id, the writes count at which a takeover
	// of it failed, until a poll sent after it answers: the observation
	// judged is the one the write found changed (or may have), and
	// judging it again before a poll tells more would only send the same
	// write again, to fail again.
	refused  map[string]uint64 // guarded by mu
	leading  bool              // guarded by mu; see leads
	firstAt  time.Time         // guarded by mu; the first successful poll
	judgedAt time.Time         // guarded by mu; firstAt + the longest lease then
}

// observation is one member's Lease, as last seen.
type observation struct {
	lease    *coordinationv1.Lease // nil: absent (deleted, or never seen)
	holder   string
	duration time.Duration
	at       time.Time // when this version (or this absence) was first seen
	// write is members.writes when a takeover recorded this, 0 for a
	// poll: a poll sent before it has nothing newer to say of this member.
	write uint64
	// unsure marks an absence that a failed poll interrupted: the Lease
	// may have come back and gone again meanwhile, so at bounds nothing,
	// and the next poll that finds it absent starts the wait afresh.
	unsure bool
	// retryAt is when a takeover of this version, or this absence, may
	// be sent again after one failed (see afterError); zero: at once.
	retryAt time.Time
	// unlisted marks a Lease read by name that the polls cannot list: its
	// labels were changed by someone (see seeUnlisted). It is judged by
	// its version as any other, but never counts as alive (it is off the
	// ring to every poll), and a poll that does not list it keeps it.
	unlisted bool
}

func newMembers(client *rest.RESTClient, namespace, ring string, clock informer.Clock, fallback, timeout time.Duration) *members {
	return &members{client: client, namespace: namespace, ring: ring, clock: clock,
		fallback: fallback, timeout: timeout, leases: map[string]observation{},
		forgot: map[string]uint64{}, refused: map[string]uint64{}}
}

// leaseSelector selects the member Leases of ring, and only those: the
// ring is named exactly by a label, never by a name prefix that another
// ring's name may begin with.
func leaseSelector(ring string) string {
	return labels.Set{LeaseRingLabel: ring}.String()
}

// poll lists the ring's Leases once, within the request timeout, and
// records what changed. A standby forgets a member whose Lease it no
// longer finds (see members); a leader keeps it as absent, its clock restarting now: absence is a change. Its
// member may have renewed after this observer last saw the Lease (polls
// fail too), but not after the delete, which came before this poll; so
// a takeover, a lease duration from now, comes after the member's term
// ended, as long as every poll since found it absent: after a failed
// poll, the next that finds it absent restarts its clock again (the
// member may have put it back, renewed, and lost it again meanwhile). A
// member taken over or forgotten since this poll was sent keeps what the
// takeover's answer said, or stays forgotten: the list may be from before
// it, and would bring a member dead for certain back to life for a lease.
// A member dead for certain stays so when its Lease is no longer listed
// (someone changed its labels, or deleted it; collection's delete then
// finds it gone, or, refused for another version, reads it again: see
// rereadDead), and so does a Lease read by name that no poll lists (see
// seeUnlisted)
// (TestATakenOverLeaseStrippedOfItsLabelsAgainStaysDeadForCertain).
func (m *members) poll(ctx context.Context) error {
	ctx, cancel := informer.WithTimeout(ctx, m.clock, m.timeout)
	defer cancel()
	m.mu.Lock()
	sent := m.writes
	m.mu.Unlock()
	list := &coordinationv1.LeaseList{}
	err := m.client.Get().Namespace(m.namespace).Resource("leases").
		Param("labelSelector", leaseSelector(m.ring)).Do(ctx).Into(list)
	if err != nil {
		m.lostSight()
		return err
	}
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	longest := m.fallback
	seen := map[string]bool{}
	for i := range list.Items {
		lease := &list.Items[i]
		id := lease.Labels[LeaseMemberLabel]
		if id == "" || lease.Name != LeaseName(m.ring, id) {
			continue // not a member Lease this library wrote
		}
		seen[id] = true
		if m.leases[id].write > sent || m.forgot[id] > sent {
			// A takeover was answered, or the member's Lease deleted and
			// the member forgotten, after this poll was sent: the list may
			// show the Lease before it, as if its member still held it.
			continue
		}
		m.record(id, lease, now)
		longest = max(longest, m.leases[id].duration)
	}
	for id, o := range m.leases {
		if !seen[id] && !m.leading {
			delete(m.leases, id) // a standby keeps what the Leases say now
			continue
		}
		deadForCertain := o.lease != nil && o.holder != id // an id is never reused: it stays dead
		if !seen[id] && (o.lease != nil || o.unsure) && o.write <= sent && !o.unlisted && !deadForCertain {
			m.leases[id] = observation{holder: o.holder, duration: o.duration, at: now, retryAt: o.retryAt} // absent since now
		}
	}
	answered(m.forgot, sent)
	answered(m.refused, sent)
	if m.firstAt.IsZero() { // a Lease that appears later is new: seen from its start
		m.firstAt, m.judgedAt = now, now.Add(longest)
	}
	return nil
}

// answered drops from marks (member id to the writes count when it was
// marked) every mark made before a poll that was sent at sent: that poll,
// and every later one, was sent after it.
func answered(marks map[string]uint64, sent uint64) {
	for id, at := range marks {
		if at <= sent {
			delete(marks, id)
		}
	}
}

// leads records whether this observer's sharder leads: only then does it
// keep members its polls no longer list (see members).
func (m *members) leads(leading bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.leading = leading
}

// lostSight marks every absence as unsure after a failed poll (see
// observation.unsure).
func (m *members) lostSight() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, o := range m.leases {
		if o.lease == nil {
			o.unsure = true
			m.leases[id] = o
		}
	}
}

// record stores lease as member id's latest version, seen at now. m.mu
// must be held.
func (m *members) record(id string, lease *coordinationv1.Lease, now time.Time) {
	o := observation{lease: lease, duration: m.fallback, at: now}
	if h := lease.Spec.HolderIdentity; h != nil {
		o.holder = *h
	}
	if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		o.duration = time.Duration(*s) * time.Second
	}
	if old, ok := m.leases[id]; ok && old.lease != nil && old.lease.ResourceVersion == lease.ResourceVersion {
		o.at, o.retryAt = old.at, old.retryAt // unchanged: its expiry counts from when we first saw it
	}
	m.leases[id] = o
}

// track starts judging member id, named by an object's label, if this
// observer has never seen its Lease: from now on it counts as absent, and
// LeaseDuration later it may be taken over.
func (m *members) track(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.leases[id]; !ok {
		m.leases[id] = observation{duration: m.fallback, at: m.clock.Now()}
	}
}

// forget drops member id, whose Lease was deleted once it owned nothing;
// a poll sent before this does not bring it back (see forgot).
func (m *members) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.leases, id)
	m.writes++
	m.forgot[id] = m.writes
}

// alive returns the members alive now, sorted, and whether this observer
// can judge yet: it has watched the Leases for at least the longest
// lease duration, so a Lease it has never seen change may be expired in
// truth but cannot be mistaken for alive much longer than that.
func (m *members) alive() (ids []string, judged bool) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, o := range m.leases {
		if o.lease != nil && o.holder == id && !o.unlisted && now.Before(o.at.Add(o.duration)) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, !m.firstAt.IsZero() && !now.Before(m.judgedAt)
}

// deadForCertain reports whether member id can never reconcile again:
// its Lease is there and says so. Released (no holder) means its term
// ended and it let go; a holder other than the member means a sharder
// took it over, and the member's next renew fails.
func (m *members) deadForCertain(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.leases[id]
	return ok && o.lease != nil && o.holder != id
}

// suspect is a member judged expired, with the observation it was
// judged by: its takeover is guarded by exactly that version, never by
// one seen later.
type suspect struct {
	id     string
	judged observation
}

// suspects returns the members to take over, each with the observation
// judged: not alive by their Lease (unchanged for its duration, or absent
// for as long, by polls that all found it absent), yet not dead for
// certain.
func (m *members) suspects() []suspect {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []suspect
	for id, o := range m.leases {
		if _, ok := m.refused[id]; ok {
			continue // a takeover of it failed: wait for a poll
		}
		expired := !now.Before(o.at.Add(o.duration)) && !o.unsure && !now.Before(o.retryAt)
		if expired && (o.lease == nil || o.holder == id) {
			out = append(out, suspect{id: id, judged: o})
		}
	}
	slices.SortFunc(out, func(a, b suspect) int { return strings.Compare(a.id, b.id) })
	return out
}

// dead returns the members dead for certain, with their Leases'
// resourceVersions.
func (m *members) dead() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for id, o := range m.leases {
		if o.lease != nil && o.holder != id {
			out[id] = o.lease.ResourceVersion
		}
	}
	return out
}

// takeOver makes suspect s's death certain, or finds it alive: it writes
// the Lease as held by by, guarded by the resourceVersion of the
// observation judged expired (s.judged), or creates it so if that
// observation was "absent". It never uses a version seen since: a member
// that renewed after it was judged (or put its deleted Lease back) makes
// the write fail with 409, even if a poll has recorded the renewal
// meanwhile; then it is alive, and the next judgement says so. It reports
// whether the takeover was written.
//
// Each write is sent once (MaxRetries(0)), as the elector's are: one
// that landed but was answered an error (a 500 with a Retry-After),
// sent again by client-go, would meet itself and read as a member found
// alive. What became of a write answered an error is read (afterError).
func (m *members) takeOver(parent context.Context, s suspect, by string) (bool, error) {
	ctx, cancel := informer.WithTimeout(parent, m.clock, m.timeout)
	defer cancel()
	now := metav1.NewMicroTime(m.clock.Now())
	var written coordinationv1.Lease
	var err error
	if o := s.judged; o.lease != nil {
		taken := o.lease.DeepCopy() // carries the resourceVersion judged
		taken.Spec.HolderIdentity, taken.Spec.RenewTime = &by, &now
		if taken.Labels == nil {
			taken.Labels = map[string]string{}
		}
		maps.Copy(taken.Labels, leaseLabels(m.ring, s.id)) // an unlisted Lease's are put back
		err = m.client.Put().Namespace(m.namespace).Resource("leases").Name(taken.Name).Body(taken).MaxRetries(0).Do(ctx).Into(&written)
		if o.unlisted && (apierrors.IsConflict(err) || apierrors.IsNotFound(err)) {
			return false, m.seeUnlisted(ctx, s.id) // it changed: look again, and wait again
		}
	} else {
		seconds := int32(o.duration / time.Second)
		taken := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.namespace, Name: LeaseName(m.ring, s.id), Labels: leaseLabels(m.ring, s.id)},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &by, RenewTime: &now, LeaseDurationSeconds: &seconds},
		}
		err = m.client.Post().Namespace(m.namespace).Resource("leases").Body(taken).MaxRetries(0).Do(ctx).Into(&written)
		if apierrors.IsAlreadyExists(err) {
			if err := m.seeUnlisted(ctx, s.id); err != nil {
				return false, err
			}
			return false, errUnseen
		}
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) {
		m.refuse(s.id)
		return false, nil // it changed since judged: judge it again, from a poll sent after
	}
	if err != nil {
		return m.afterError(parent, s, by, err)
	}
	m.wrote(s.id, &written)
	return true, nil
}

// wrote records lease, a takeover of member id this observer wrote, so
// that no poll sent before it is recorded over it (see observation.write).
func (m *members) wrote(id string, lease *coordinationv1.Lease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.record(id, lease, m.clock.Now())
	m.writes++
	o := m.leases[id]
	o.write = m.writes
	m.leases[id] = o
}
