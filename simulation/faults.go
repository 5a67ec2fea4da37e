package simulation

import (
	"context"
	"time"

	"github.com/listwatch/informer/sharding"
)

// span is a pause of one slot, on simulated time; an open one has a
// zero to.
type span struct {
	slot     int
	from, to time.Time
}

// apply makes fault f happen now. A window fault's end is scheduled on
// its own goroutine, which wg tracks.
func (w *world) apply(ctx context.Context, f Fault, after func(time.Duration, func())) {
	l := w.links[f.Replica%len(w.links)]
	slot := f.Replica % len(w.links)
	w.hist.add(Event{What: FaultEvent, Detail: f.String()})
	switch f.Kind {
	case Latency:
		l.set(func(l *link) { l.latency = f.Max })
		after(f.For, func() { l.set(func(l *link) { l.latency = 0 }) })
	case Hang:
		l.set(func(l *link) { l.hang = f.P })
		after(f.For, func() { l.set((*link).endHang) })
	case Errors:
		l.set(func(l *link) { l.errP, l.status = f.P, f.Status })
		after(f.For, func() { l.set(func(l *link) { l.errP = 0 }) })
	case Skew:
		l.rate.set(f.Rate)
		after(f.For, func() { l.rate.set(1) })
	case Lag:
		l.set(func(l *link) { l.lag = true })
		after(f.For, func() { l.set((*link).endLag) })
	case Forbidden:
		l.set(func(l *link) { l.forbidden = true })
		after(f.For, func() { l.set(func(l *link) { l.forbidden = false }) })
	case Partition:
		l.set(func(l *link) { l.partition = true })
		l.cutWatches()
		after(f.For, func() { l.set((*link).endPartition) })
	case Pause:
		if l.gate.isPaused() {
			return
		}
		l.gate.pause()
		l.cutWatches()
		w.mu.Lock()
		w.pauses = append(w.pauses, span{slot: slot, from: time.Now()})
		w.mu.Unlock()
		after(f.For, func() { w.resume(slot) })
	case Kill:
		w.kill(slot)
		after(f.For, func() {
			if ctx.Err() == nil {
				w.start(ctx, slot) // unless the heal restarted it first
			}
		})
	case CutWatches:
		w.srv.CutWatches()
	case Compact:
		w.srv.Compact(w.srv.ResourceVersion())
		w.srv.CutWatches()
	case RemoveCRD, InstallCRD, RescopeCRD, RekindCRD:
		w.applyCRD(f)
	case MoveCRD:
		if from := w.applyCRD(f); from != "" && f.For > 0 {
			id := w.startFlip(from, f.Version, f.Back)
			after(f.For, func() { w.moveCRDBack(id, from, f.Version) })
		}
	case DeleteMemberLease:
		w.deleteLease(ctx, w.memberLease(slot, f.Ring))
	case DeleteSharderLease:
		rings := w.opts.Scenario.rings()
		if len(rings) == 1 {
			w.deleteLease(ctx, LeaderLease)
			return
		}
		w.deleteLease(ctx, "sharder-"+rings[f.Ring%len(rings)])
	}
}

// resume ends slot's pause.
func (w *world) resume(slot int) {
	w.mu.Lock()
	for i := range w.pauses {
		if w.pauses[i].slot == slot && w.pauses[i].to.IsZero() {
			w.pauses[i].to = time.Now()
		}
	}
	w.mu.Unlock()
	w.links[slot].gate.resume()
}

// memberLease is the Lease of slot's replica's open term in ring (the
// leader's Lease in the leader-elected scenario), or "".
func (w *world) memberLease(slot, ring int) string {
	rings := w.opts.Scenario.rings()
	if len(rings) == 1 {
		return LeaderLease
	}
	w.mu.Lock()
	r := w.replicas[slot]
	w.mu.Unlock()
	if r == nil {
		return ""
	}
	name := rings[ring%len(rings)]
	t := r.term(name)
	if t == nil {
		return ""
	}
	return sharding.LeaseName(name, t.member)
}

// deleteLease deletes a Lease as the admin, unconditionally.
func (w *world) deleteLease(ctx context.Context, name string) {
	if name == "" {
		return
	}
	_ = w.lease.Delete().Namespace(Namespace).Resource("leases").Name(name).Do(ctx).Error()
}

// healAll ends every fault: every window, every pause, and restarts
// every killed slot.
func (w *world) healAll(ctx context.Context) {
	for slot, l := range w.links {
		l.heal()
		l.rate.set(1)
		w.resume(slot)
		w.start(ctx, slot) // a killed slot, unless its restart timer came first
	}
	w.hist.add(Event{What: Healed, Detail: "every fault ends"})
}
