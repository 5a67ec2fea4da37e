package simulation

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// LeaderLease is the leader-elected scenario's Lease, and LeaderRing
// the ring name its history uses.
const (
	LeaderLease = "sim-leader"
	LeaderRing  = "leader"
)

// leaderElected is the scenario of package leaderelection: every
// replica a candidate for one Lease; the leader reconciles every object.
type leaderElected struct{}

func (leaderElected) String() string { return "leader-elected" }
func (leaderElected) schedule(seed int64, replicas int, length time.Duration) Schedule {
	return NewSchedule(seed, replicas, length)
}
func (leaderElected) rings() []string { return []string{LeaderRing} }

func (leaderElected) run(ctx context.Context, w *world, r *replica) {
	t := w.opts.Timing
	leases, err := leaderelection.NewClient(r.cfg)
	if err != nil {
		return
	}
	el, err := leaderelection.New(leaderelection.Config{
		Client: leases, Namespace: Namespace, Name: LeaderLease, Identity: r.name,
		LeaseDuration: t.Lease, RenewDeadline: t.Renew, RetryPeriod: t.Retry, ReleaseOnCancel: true,
		Clock: r.clock(), Logger: w.log.With("replica", r.name),
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, _ := leaderelection.TermOf(ctx)
				w.hist.add(Event{What: TermStart, Replica: r.name, Ring: LeaderRing, Member: r.name, Fence: term.Fence})
				defer func() {
					r.setTerm(LeaderRing, nil)
					w.hist.add(Event{What: TermEnd, Replica: r.name, Ring: LeaderRing, Member: r.name, Deadline: r.onHistorysClock(term.End())})
				}()
				if w.opts.Controller != nil {
					runUserController(ctx, w, r, LeaderRing, r.name, nil)
					return
				}
				runController(ctx, w, r, LeaderRing, r.name, w.opts.Label, func(_ *si.Informer[*corev1.ConfigMap], ctl *controller) workqueue.ReconcileFunc[informer.Key] {
					return ctl.reconcile
				})
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		w.log.Error("elector", "err", err)
		return
	}
	for ctx.Err() == nil {
		w.noteLost(r.name, el.Run(ctx)) // a lost term is followed by standing again
	}
}
