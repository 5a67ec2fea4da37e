package simulation

import (
	"context"
	"errors"
	"log/slog"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/sharding"
	"github.com/listwatch/informer/workqueue"
)

// Controller is a controller author's own code, run by the simulator in
// place of the built-in controller: in every term of every replica (the
// leader's term, or a member's term in each ring), over the replica's
// faulty network, while the writers change the run's ConfigMaps. The
// simulator checks the library's promises around it (one leader, fences
// that grow, one reconcile per key, moves only by drain) and, once the
// faults have stopped, Converged: the controller's own end state.
//
// What the simulator cannot see of your code it does not check: it sees
// your reconciles only through Term.Trace, and compares a cache of yours
// with the server only if you hand it the informer (Observe).
type Controller struct {
	// Run runs the controller for one term, until ctx ends, and returns
	// only once everything it started has stopped (the bubble must end
	// with no goroutine of it left). Required. A Run that returns while
	// its term goes on (its setup failed during a fault, say) is called
	// again a RetryPeriod later, and the history records a retry: the
	// process of a controller whose main returned would exit and be
	// started again.
	Run func(ctx context.Context, term Term)
	// Converged reports what is not yet as the controller wants (nil:
	// converged). Once every fault has ended, the simulator calls it each
	// second, until the convergence bound, with a config for the server
	// that meets no faults. Nil: only the library's part is checked
	// (every replica in a term, every object on its ring's member).
	Converged func(ctx context.Context, server *rest.Config) error
}

// Term is what one term of a Controller is given.
type Term struct {
	Replica string // the replica: a new name after each kill
	Ring    string // LeaderRing, or the member's ring
	Member  string // the member's id, or the leader's name (Replica)
	// Config reaches the server through this replica's faults.
	Config    *rest.Config
	Namespace string // where the run's objects are
	// Selector selects the term's objects: Options.Label for a leader,
	// the shard's selector (sharding.Shard.Selector) for a member.
	Selector string
	// Shard is a member's shard; nil for a leader. Wrap your reconcile
	// in sharding.Reconciler with it, as a sharded controller must.
	Shard *sharding.Shard
	// Clock is the replica's: its timers stop while it is paused.
	Clock  informer.Clock
	Logger *slog.Logger
	// Trace must be your workqueue's Options.Trace (it may be your
	// informers' too): its KindGot and KindDone events are how the
	// simulator sees each reconcile begin and end, for the invariant
	// "one reconcile per key". Events reach Options.Trace as well.
	Trace informer.TraceHook

	observer *observer // for Observe
}

// errNoRun is Run's error for a Controller without one.
var errNoRun = errors.New("simulation: Options.Controller has no Run")

// runUserController runs the user's Controller for one term of r in
// ring, until ctx ends.
func runUserController(ctx context.Context, w *world, r *replica, ring, member string, shard *sharding.Shard) {
	selector := w.opts.Label
	if shard != nil {
		selector = shard.Selector()
	}
	sel, err := labels.Parse(selector)
	if err != nil { // Run validated Options.Label; a shard's selector is one label
		w.log.Error("selector", "err", err)
		return
	}
	term := Term{
		Replica: r.name, Ring: ring, Member: member,
		Config: rest.CopyConfig(r.cfg), Namespace: Namespace, Selector: selector, Shard: shard,
		Clock: r.clock(), Logger: w.log.With("replica", r.name, "ring", ring),
		observer: &observer{w: w, r: r, ring: ring, member: member, selector: sel},
		Trace: func(e informer.TraceEvent) {
			if e.Stage == informer.StageWorkqueue {
				switch e.Kind {
				case workqueue.KindGot:
					w.hist.add(Event{What: Begin, Replica: r.name, Ring: ring, Member: member, Key: e.Key})
				case workqueue.KindDone:
					w.hist.add(Event{What: End, Replica: r.name, Ring: ring, Member: member, Key: e.Key})
				}
			}
			if w.opts.Trace != nil {
				e.Detail = r.name + " " + ring + ": " + e.Detail
				w.opts.Trace(e)
			}
		},
	}
	for {
		r.setTerm(ring, &openTerm{member: member, selector: sel}) // no cache to compare until Run observes one
		w.opts.Controller.Run(ctx, term)
		if ctx.Err() != nil {
			return
		}
		w.hist.add(Event{What: Retry, Replica: r.name, Ring: ring, Member: member, Detail: "Controller.Run returned while its term went on"})
		if !informer.Sleep(ctx, r.clock(), w.opts.Timing.Retry) {
			return // the term ended meanwhile: no Run after it
		}
	}
}
