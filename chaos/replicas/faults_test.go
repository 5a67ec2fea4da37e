package replicas

import (
	"context"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// applied is a fault as it happened.
type applied struct {
	n          int // its place in the schedule, from 1
	kind       faultKind
	target     string // the replica, Lease or binding it hit
	note       string // what followed: a replacement's name, a missing drain
	from, till time.Time
}

func (a applied) String() string {
	s := fmt.Sprintf("#%d %s %s", a.n, a.kind, a.target)
	if a.note != "" {
		s += " (" + a.note + ")"
	}
	return s
}

// apply runs one fault to its end: a pause is resumed, a partition
// healed, a killed replica replaced, a refusal lifted.
func (r *run) apply(ctx context.Context, n int, f fault) applied {
	a := applied{n: n, kind: f.kind, from: time.Now()}
	defer func() { r.t.Logf("%s fault %v at %v", r.since(a.from), a, a.till.Sub(a.from).Round(time.Millisecond)) }()
	targets := r.fleet.running()
	p := targets[f.pick%len(targets)]
	switch f.kind {
	case kill:
		a.target = p.name
		r.fleet.kill(p)
		a.note = r.startOne()
	case pause:
		a.target = p.name
		r.fleet.pause(p)
		sleep(ctx, f.hold)
		r.fleet.resume(p)
	case blackhole:
		a.target = p.name
		p.proxy.Blackhole()
		sleep(ctx, f.hold)
		p.proxy.Heal()
	case deleteMemberLease, deleteSharderLease:
		a.target = r.deleteLease(ctx, f)
	case killSharder:
		a.target, a.note = r.killSharderMidRebalance(ctx, rings[f.ring])
	case join:
		a.target = r.startOne()
	case leave:
		a.target = p.name
		r.fleet.leave(p, 15*time.Second)
	case forbid:
		a.target = "RoleBinding " + configMapsRole
		if err := unbind(ctx, r.rbac, r.ns, configMapsRole); err != nil {
			a.note = err.Error()
		}
		sleep(ctx, f.hold)
		if err := bind(ctx, r.rbac, r.ns, configMapsRole); err != nil {
			a.note = err.Error()
		}
	}
	a.till = time.Now()
	return a
}

// startOne starts a replica and returns its name, or the error.
func (r *run) startOne() string {
	p, err := r.fleet.start()
	if err != nil {
		r.t.Errorf("starting a replica: %v", err)
		return "start failed: " + err.Error()
	}
	return p.name
}

// deleteLease deletes, as the admin, a member's Lease (one held by a
// member id a replica printed) or a sharder's (one held by a replica's
// name), found by listing the Leases: the checker does not assume how
// they are named.
func (r *run) deleteLease(ctx context.Context, f fault) string {
	list := &coordinationv1.LeaseList{}
	if err := r.leases.Get().Namespace(r.ns).Resource("leases").Do(ctx).Into(list); err != nil {
		return "listing failed: " + err.Error()
	}
	members := r.fleet.memberIDs()
	var names []string
	for _, l := range list.Items {
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		_, isMember := members[holder]
		if (f.kind == deleteMemberLease && isMember) || (f.kind == deleteSharderLease && r.fleet.isProc(holder)) {
			names = append(names, l.Name+" (held by "+holder+")")
		}
	}
	if len(names) == 0 {
		return "none held"
	}
	slices.Sort(names)
	pick := names[f.pick%len(names)]
	var name string
	fmt.Sscanf(pick, "%s", &name)
	if err := r.leases.Delete().Namespace(r.ns).Resource("leases").Name(name).Do(ctx).Error(); err != nil {
		return pick + ": " + err.Error()
	}
	return pick
}

// killSharderMidRebalance starts a replica, waits for ring's sharder to
// drain an object toward the new member (the rebalance has begun), and
// SIGKILLs the process whose sharder of ring leads, then starts another
// replica in its place.
func (r *run) killSharderMidRebalance(ctx context.Context, ring string) (target, note string) {
	joined := time.Now()
	note = "joined " + r.startOne()
	wait := r.timing.Lease + 5*time.Second // the join's Lease is seen within a poll; drains follow at once
	drained := awaitEvent(ctx, r.fleet, wait, func(ev event) bool {
		return ev.kind == "label" && len(ev.fields) >= 2 && ev.fields[0] == ring && ev.fields[1] == "drain" && ev.at.After(joined)
	})
	if !drained {
		note += fmt.Sprintf(", no drain within %v", wait)
	}
	leader := r.fleet.leader(ring)
	if leader == nil {
		return "no sharder of " + ring, note
	}
	r.fleet.kill(leader)
	return leader.name + " (sharder of " + ring + ")", note + fmt.Sprintf(", killed %v after the join, replaced by %s", time.Since(joined).Round(time.Millisecond), r.startOne())
}

// awaitEvent waits at most d for an event that match accepts.
func awaitEvent(ctx context.Context, f *fleet, d time.Duration, match func(event) bool) bool {
	deadline := time.Now().Add(d)
	for seen := 0; time.Now().Before(deadline); {
		events := f.snapshot()
		for _, ev := range events[seen:] {
			if match(ev) {
				return true
			}
		}
		seen = len(events)
		if !sleep(ctx, 20*time.Millisecond) {
			return false
		}
	}
	return false
}

// sleep waits d or until ctx ends, and reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
