package sharding

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
)

// members judges which members of a ring are alive, from their shard
// Leases, on this process's clock. A member is alive while its Lease has
// a holder and has changed within its leaseDurationSeconds since this
// observer first saw its current version: the rule a leader election
// standby applies (see leaderelection's "Clocks"), and for the same
// reason — renewTime was written by another host's clock.
//
// It keeps only observations, never decisions: a new sharder builds its
// own from the Leases, and that is all the state there is.
type members struct {
	client    *rest.RESTClient
	namespace string
	prefix    string // LeaseName(ring, "")
	clock     informer.Clock
	fallback  time.Duration // for a Lease that names no duration

	mu       sync.Mutex
	leases   map[string]observation // guarded by mu; by member id
	firstAt  time.Time              // guarded by mu; the first successful poll
	judgedAt time.Time              // guarded by mu; firstAt + the longest lease then
}

// observation is one member's Lease, as last seen.
type observation struct {
	resourceVersion string
	holder          string
	duration        time.Duration
	at              time.Time // when this resourceVersion was first seen
}

func newMembers(client *rest.RESTClient, namespace, ring string, clock informer.Clock, fallback time.Duration) *members {
	return &members{client: client, namespace: namespace, prefix: LeaseName(ring, ""), clock: clock,
		fallback: fallback, leases: map[string]observation{}}
}

// poll lists the Leases once and records what changed.
func (m *members) poll(ctx context.Context) error {
	list := &coordinationv1.LeaseList{}
	if err := m.client.Get().Namespace(m.namespace).Resource("leases").Do(ctx).Into(list); err != nil {
		return err
	}
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[string]observation{}
	longest := m.fallback
	for _, lease := range list.Items {
		id, ok := strings.CutPrefix(lease.Name, m.prefix)
		if !ok || id == "" {
			continue
		}
		o := observation{resourceVersion: lease.ResourceVersion, duration: m.fallback, at: now}
		if h := lease.Spec.HolderIdentity; h != nil {
			o.holder = *h
		}
		if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
			o.duration = time.Duration(*s) * time.Second
		}
		if old, ok := m.leases[id]; ok && old.resourceVersion == o.resourceVersion {
			o.at = old.at // unchanged: its expiry counts from when we first saw it
		}
		longest = max(longest, o.duration)
		seen[id] = o
	}
	m.leases = seen
	if m.firstAt.IsZero() { // a Lease that appears later is new: seen from its start
		m.firstAt, m.judgedAt = now, now.Add(longest)
	}
	return nil
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
		if o.holder == id && now.Before(o.at.Add(o.duration)) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, !m.firstAt.IsZero() && !now.Before(m.judgedAt)
}

// dead returns the members whose Leases this observer has judged dead
// (released, or unchanged for their duration), with the resourceVersion
// it judged.
func (m *members) dead() map[string]string {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for id, o := range m.leases {
		if o.holder != id || !now.Before(o.at.Add(o.duration)) {
			out[id] = o.resourceVersion
		}
	}
	return out
}
