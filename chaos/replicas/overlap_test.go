package replicas

import (
	"fmt"
	"sort"
	"time"
)

// interval is one reconcile of one key by one member of one ring, on
// this host's clock, from its B line to its E line.
type interval struct {
	ring, member, proc, key string
	start, end              time.Time
	cut                     bool // no E line: the process died first, and the interval ends with it
}

// intervals pairs every member's B and E lines per ring and key. A
// reconcile that never printed its E ended when its process did (end
// holds when each process ended: killed or exited).
func intervals(events []event, end map[string]time.Time) []interval {
	type open struct{ ring, member, key string }
	began := map[open]event{}
	var out []interval
	for _, ev := range events {
		if (ev.kind != "B" && ev.kind != "E") || len(ev.fields) != 3 {
			continue
		}
		k := open{ev.fields[0], ev.fields[1], ev.fields[2]}
		if ev.kind == "B" {
			began[k] = ev
			continue
		}
		if b, ok := began[k]; ok {
			out = append(out, interval{ring: k.ring, member: k.member, proc: ev.proc, key: k.key, start: b.at, end: ev.at})
			delete(began, k)
		}
	}
	for k, b := range began {
		out = append(out, interval{ring: k.ring, member: k.member, proc: b.proc, key: k.key, start: b.at, end: end[b.proc], cut: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// overlap is two members' reconciles of one key in one ring that ran at
// the same time. paused says one of the two was the work of a paused
// process (see excusedByPause): the case leader election does not fence
// (see its doc), reported apart and not failed.
type overlap struct {
	a, b   interval
	paused bool
}

func (o overlap) String() string {
	return fmt.Sprintf("%s %s: %s (%s) reconciled %v–%v, %s (%s) reconciled %v–%v",
		o.a.ring, o.a.key, o.a.member, o.a.proc, clock(o.a.start), clock(o.a.end), o.b.member, o.b.proc, clock(o.b.start), clock(o.b.end))
}

// overlaps finds every pair of intervals of one ring and key, of two
// members, that overlap. paused says whether an interval is the work of
// a paused process.
func overlaps(all []interval, paused func(interval) bool) []overlap {
	byKey := map[string][]interval{}
	for _, iv := range all {
		byKey[iv.ring+" "+iv.key] = append(byKey[iv.ring+" "+iv.key], iv)
	}
	var out []overlap
	for _, ivs := range byKey { // each sorted by start, as all is
		for i, a := range ivs {
			for _, b := range ivs[i+1:] {
				if !b.start.Before(a.end) {
					break // sorted by start: every later one starts after a ended too
				}
				if a.member == b.member {
					continue
				}
				out = append(out, overlap{a: a, b: b, paused: paused(a) || paused(b)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].b.start.Before(out[j].b.start) })
	return out
}

// clock prints a time of day to the millisecond, as the log does.
func clock(t time.Time) string { return t.Format("15:04:05.000") }

// excusedByPause reports whether iv is the work of a paused process:
// its process was SIGSTOPped during it, or it began after its member's
// term had run out while the process was stopped (resumed, a worker took
// a key before the term's watchdog, overdue too, had ended the context).
// pauses are the process's pauses; deadline is the member's term end
// (zero if unknown).
func excusedByPause(iv interval, pauses []span, deadline time.Time) bool {
	for _, p := range pauses {
		if p.covers(iv.start, iv.end) {
			return true
		}
		if !deadline.IsZero() && p.covers(deadline, deadline) && !iv.start.Before(deadline) {
			return true
		}
	}
	return false
}
