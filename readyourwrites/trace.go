package readyourwrites

import "github.com/listwatch/informer"

// The Kind values of the trace events a Guard emits, with Stage
// [informer.StageGuard] and the owner's key.
const (
	// KindHeld: Hold held a key whose recorded writes are not all in
	// their caches yet. Emitted once per hold, not on every re-check.
	KindHeld = "held"
	// KindReleased: a held key's writes are all in their caches; its
	// reconcile may run. Detail: how long it was held.
	KindReleased = "released"
	// KindStale: a key was held for MaxHold and its writes are still not
	// all in their caches; its reconcile runs anyway, on a cache that may
	// not show them, and its records are dropped.
	KindStale = "stale"
)

// emit sends one event to the trace hook, if there is one. The caller
// holds g.mu, so events arrive in the order things happened.
func (g *Guard) emit(kind string, key informer.Key, detail string) {
	if g.opts.Trace == nil {
		return
	}
	g.opts.Trace(informer.TraceEvent{Stage: informer.StageGuard, Kind: kind, Key: key.String(), Detail: detail, Time: g.opts.Clock.Now()})
}
