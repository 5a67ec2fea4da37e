package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
)

// guard bounds every wait against hanging; the checks use computed bounds.
const guard = 3 * time.Minute

// handovers runs the three handovers and checks every promise.
func handovers(ctx context.Context, s settings, f *fleet, a api, out io.Writer) error {
	if s.replicas < 3 {
		return errors.New("--scenario=handovers needs --replicas of at least 3")
	}
	started := time.Now()
	for i := range s.replicas {
		if _, err := f.start(fmt.Sprintf("r%d", i+1), true, true); err != nil {
			return err
		}
	}
	n := s.replicas
	owners, err := awaitConverged(ctx, a, f, n, s.objects, guard)
	if err != nil {
		return err
	}
	rate := patchRate(f.snapshot(), "assign", time.Time{})
	fmt.Fprintf(out, "assigned: all %d objects to %d members within %v of the start; the sharder PATCHed %.0f labels/s\n",
		s.objects, n, time.Since(started).Round(time.Millisecond), rate)
	if err := reportShares(f, s.objects, out); err != nil {
		return err
	}

	// 1. A kill: a member that is not the sharder.
	victim := pick(f, func(p *proc) bool { return p != f.leader() })
	moved := ownedBy(owners, victim)
	killedAt := f.kill(victim.proc)
	n--
	if _, err := awaitConverged(ctx, a, f, n, s.objects, guard); err != nil {
		return err
	}
	// The moves' own PATCH rate, not the assignment's: the API server's
	// pace is the machine's, and the load on it may change from one
	// phase to the next. What the bound checks is the rest: that the
	// sharder waited no longer than the Lease and its polls before it
	// moved them, and that the survivors reconciled them as they came.
	moveRate := patchRate(f.snapshot(), "move", killedAt)
	bound := s.lease + 2*time.Duration(float64(s.retry)*(1+leaderelection.JitterFactor)) +
		time.Duration(float64(len(moved))/moveRate*float64(time.Second)) +
		time.Duration(len(moved))*s.reconcile/time.Duration(s.workers*n) + 2*time.Second
	took, err := takeover(intervals(f.snapshot(), f.killTimes()), moved, victim.id, killedAt)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "kill: %d objects of %s reconciled by others within %v of SIGKILL (bound %v = lease + 2·retry·(1+jitter) + moved/PATCH rate + moved·reconcile/(workers·members) + 2s; the moves ran at %.0f PATCHes/s)\n",
		len(moved), victim.proc.name, took.Round(time.Millisecond), bound.Round(time.Millisecond), moveRate)
	if took > bound {
		return fmt.Errorf("kill: takeover %v exceeds its bound %v", took, bound)
	}

	// 2. A join; mid-rebalance the sharder's process is killed.
	joinedAt := time.Now()
	if _, err := f.start(fmt.Sprintf("r%d", s.replicas+1), true, true); err != nil {
		return err
	}
	sharder := f.leader()
	if err := awaitEvent(ctx, f, func(ev event) bool { return ev.kind == "label" && ev.fields[0] == "drain" && ev.at.After(joinedAt) }); err != nil {
		return err
	}
	sharderKilledAt := f.kill(sharder)
	fmt.Fprintf(out, "join: r%d joined; the sharder (%s) was killed mid-rebalance, %v after the join\n", s.replicas+1, sharder.name, sharderKilledAt.Sub(joinedAt).Round(time.Millisecond))
	if _, err := awaitConverged(ctx, a, f, n, s.objects, guard); err != nil { // n-1 after the kill, +1 joined
		return err
	}
	if next := f.leader(); next == nil || next == sharder {
		return errors.New("join: no other sharder took over")
	}
	fmt.Fprintf(out, "join: %s's sharder resumed; converged on %d members %v after the join\n", f.leader().name, n, time.Since(joinedAt).Round(time.Millisecond))

	// 3. A partition: a member behind a blackholed proxy.
	cut := pick(f, func(p *proc) bool { return p != f.leader() })
	cut.proc.proxy.Blackhole()
	cutAt := time.Now()
	var stopped event
	if err := awaitEvent(ctx, f, func(ev event) bool {
		stopped = ev
		return ev.kind == "stopped" && ev.fields[0] == cut.id
	}); err != nil {
		return err
	}
	deadline := parseNanos(stopped.fields[1])
	margin := s.lease - s.renew // the sharder cannot move its objects before deadline + margin
	for _, ivs := range intervals(f.snapshot(), f.killTimes()) {
		for _, iv := range ivs {
			if iv.member == cut.id && iv.end.After(deadline.Add(margin)) {
				return fmt.Errorf("blackhole: %s reconciled until %v, past its renew deadline %v + %v", cut.id, iv.end, deadline, margin)
			}
		}
	}
	fmt.Fprintf(out, "blackhole: %s stopped every reconcile %v after the cut (its deadline: %v after the cut)\n",
		cut.proc.name, stopped.at.Sub(cutAt).Round(time.Millisecond), deadline.Sub(cutAt).Round(time.Millisecond))
	if _, err := awaitConverged(ctx, a, f, n-1, s.objects, guard); err != nil {
		return err
	}
	cut.proc.proxy.Heal()
	healedAt := time.Now()
	var rejoined event
	if err := awaitEvent(ctx, f, func(ev event) bool {
		rejoined = ev
		return ev.kind == "member" && ev.proc == cut.proc.name && ev.at.After(cutAt)
	}); err != nil {
		return err
	}
	if _, err := awaitConverged(ctx, a, f, n, s.objects, guard); err != nil {
		return err
	}
	fmt.Fprintf(out, "blackhole: healed; %s rejoined as %s %v after the heal, converged %v after the heal\n",
		cut.proc.name, rejoined.fields[1], rejoined.at.Sub(healedAt).Round(time.Millisecond), time.Since(healedAt).Round(time.Millisecond))

	if err := checkNoOverlap(intervals(f.snapshot(), f.killTimes())); err != nil {
		return err
	}
	fmt.Fprintln(out, "no two members' reconciles of one object overlapped")
	return reportShares(f, s.objects, out)
}

// member is a live member id and its process.
type member struct {
	id   string
	proc *proc
}

// pick returns a live member whose process ok accepts, the first by id.
func pick(f *fleet, ok func(*proc) bool) member {
	live := f.members()
	ids := make([]string, 0, len(live))
	for id := range live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if ok(live[id]) {
			return member{id, live[id]}
		}
	}
	return member{}
}

func ownedBy(owners map[informer.Key]string, m member) []informer.Key {
	var out []informer.Key
	for key, owner := range owners {
		if owner == m.id {
			out = append(out, key)
		}
	}
	return out
}

// awaitEvent waits for an event that match accepts.
func awaitEvent(ctx context.Context, f *fleet, match func(event) bool) error {
	deadline := time.Now().Add(guard)
	for seen := 0; time.Now().Before(deadline); {
		events := f.snapshot()
		for _, ev := range events[seen:] {
			if match(ev) {
				return nil
			}
		}
		seen = len(events)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("an awaited event did not come within %v", guard)
}

// patchRate is the sharder's label PATCHes of action ("assign", "move")
// per second, over those it made after since: the first assignment's
// rate is reported, the kill's moves' rate is what its bound divides by.
func patchRate(events []event, action string, since time.Time) float64 {
	var first, last time.Time
	count := 0
	for _, ev := range events {
		if ev.kind == "label" && ev.fields[0] == action && ev.at.After(since) {
			if first.IsZero() {
				first = ev.at
			}
			last, count = ev.at, count+1
		}
	}
	if count < 2 || !last.After(first) {
		return 1 // no measurement: assume the worst reasonable rate
	}
	return float64(count-1) / last.Sub(first).Seconds()
}

func reportShares(f *fleet, objects int, out io.Writer) error {
	shares, err := checkShares(f, objects)
	for id, c := range shares {
		fmt.Fprintf(out, "  %s caches %d objects (fair share %d): live heap %.1f MiB, %.1f MiB of it since its term began\n",
			id, c.objects, objects/len(shares), mib(c.heap), mib(c.cacheHeap))
	}
	return err
}

func mib[N int64 | uint64](n N) float64 { return float64(n) / (1 << 20) }
