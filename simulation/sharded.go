package simulation

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/metrics"
	"github.com/listwatch/informer/readyourwrites"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// Rings are the sharded scenario's two rings. Their names share a
// prefix on purpose, as in chaos/replicas: a sharder that finds its
// ring's Leases by name prefix reads the other ring's as its own.
var Rings = []string{"web", "web-api"}

var configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")

// sharded is the scenario of package sharding: every replica a member
// of both rings and a sharder candidate of both.
type sharded struct{}

func (sharded) String() string { return "sharded" }
func (sharded) schedule(seed int64, replicas int, length time.Duration) Schedule {
	return NewSchedule(seed, replicas, length)
}
func (sharded) rings() []string { return Rings }

func (sharded) run(ctx context.Context, w *world, r *replica) {
	t := w.opts.Timing
	leases, err := leaderelection.NewClient(r.cfg)
	if err != nil {
		w.log.Error("lease client", "err", err)
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, ring := range Rings {
		sharderLeases, err := leaderelection.NewClient(sharderConfig(r.cfg, ring)) // tells its writes apart (keepingToRings)
		if err != nil {
			w.log.Error("sharder lease client", "err", err)
			return
		}
		mem := metrics.NewMemory()
		reg, err := metrics.NewRegistry(mem)
		if err != nil {
			w.log.Error("sharder metrics", "err", err)
			return
		}
		sharder, err := sharding.NewSharder(sharding.SharderConfig{
			Config: sharderConfig(r.cfg, ring), LeaseClient: sharderLeases, LeaseNamespace: Namespace, Ring: ring, Identity: r.name,
			Resources: []schema.GroupVersionResource{configMaps}, Namespace: Namespace,
			LeaseDuration: t.Lease, RenewDeadline: t.Renew, RetryPeriod: t.Retry, Logger: w.log.With("replica", r.name),
			Clock: r.clock(), Metrics: reg,
			OnLabel: func(action string, key informer.Key, member string) {
				w.log.Debug("simulation: sharder labelled", "replica", r.name, "ring", ring, "action", action, "key", key, "member", member)
			},
			OnLeading: func(leading bool) {
				what := SharderOff
				if leading {
					what = SharderOn
				}
				w.hist.add(Event{What: what, Replica: r.name, Ring: ring})
				r.setSharder(ring, leading, mem)
			},
		})
		if err != nil {
			w.log.Error("sharder", "err", err)
			return
		}
		member, err := sharding.NewMember(sharding.MemberConfig{
			Client: leases, Namespace: Namespace, Ring: ring, Name: r.name,
			LeaseDuration: t.Lease, RenewDeadline: t.Renew, RetryPeriod: t.Retry, Logger: w.log.With("replica", r.name),
			Clock: r.clock(),
			Run: func(ctx context.Context, shard sharding.Shard) {
				term, _ := leaderelection.TermOf(ctx)
				w.hist.add(Event{What: TermStart, Replica: r.name, Ring: ring, Member: shard.Member, Fence: term.Fence})
				defer func() {
					r.setTerm(ring, nil)
					w.hist.add(Event{What: TermEnd, Replica: r.name, Ring: ring, Member: shard.Member, Deadline: r.onHistorysClock(term.End())})
				}()
				if w.opts.Controller != nil {
					runUserController(ctx, w, r, ring, shard.Member, &shard)
					return
				}
				memberTerm(ctx, w, r, shard)
			},
		})
		if err != nil {
			w.log.Error("member", "err", err)
			return
		}
		sharderAfter, memberAfter := r.boot.next(), r.boot.next()
		wg.Go(func() {
			if startAfter(ctx, &r.link.gate, sharderAfter) {
				_ = sharder.Run(ctx)
			}
		})
		wg.Go(func() {
			if startAfter(ctx, &r.link.gate, memberAfter) {
				_ = member.Run(ctx)
			}
		})
	}
}

// memberTerm is one member's term: an informer over its objects, and
// workers that reconcile parents through sharding.Reconciler.
func memberTerm(ctx context.Context, w *world, r *replica, shard sharding.Shard) {
	runController(ctx, w, r, shard.Ring, shard.Member, shard.Selector(), func(cms *si.Informer[*corev1.ConfigMap], ctl *controller) workqueue.ReconcileFunc[informer.Key] {
		return sharding.Reconciler(shard, cms.Lister(), ctl.client, "configmaps", ctl.reconcile)
	})
}

// runController runs a controller's informer and workers until ctx
// ends: the body of a member's or a leader's term. A term whose work
// returns early keeps its Lease (leaderelection ends a term only when
// its context ends), so a setup that fails (InformerFor's discovery
// check during a fault) is tried again, every RetryPeriod, until ctx
// ends.
func runController(ctx context.Context, w *world, r *replica, ring, member, selector string,
	wrap func(*si.Informer[*corev1.ConfigMap], *controller) workqueue.ReconcileFunc[informer.Key]) {
	for ctx.Err() == nil {
		if runControllerOnce(ctx, w, r, ring, member, selector, wrap) {
			return
		}
		w.hist.add(Event{What: Retry, Replica: r.name, Ring: ring, Member: member, Detail: "the controller's setup failed"})
		informer.Sleep(ctx, r.clock(), w.opts.Timing.Retry)
	}
}

// runControllerOnce sets the controller up and runs it until ctx ends;
// it reports false if the setup failed.
func runControllerOnce(ctx context.Context, w *world, r *replica, ring, member, selector string,
	wrap func(*si.Informer[*corev1.ConfigMap], *controller) workqueue.ReconcileFunc[informer.Key]) bool {
	t := w.opts.Timing
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return false
	}
	opts := si.FactoryOptions{Scheme: scheme, Logger: w.log.With("replica", r.name)}
	if w.opts.Trace != nil {
		opts.Trace = func(e informer.TraceEvent) {
			e.Detail = r.name + " " + ring + ": " + e.Detail
			w.opts.Trace(e)
		}
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		w.log.Error("selector", "err", err)
		return false
	}
	factory, err := si.NewFactory(r.cfg, opts)
	if err != nil {
		w.log.Error("factory", "err", err)
		return false
	}
	cms, err1 := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.ForResource(configMaps), si.InNamespace(Namespace),
		si.WithLabels(selector), si.WithReflector(sharding.RetryTuning(t.Lease)))
	client, err2 := factory.RESTClient(corev1.SchemeGroupVersion)
	limiter, err3 := sharding.RetryLimiter(t.Lease)
	if err := errors.Join(err1, err2, err3); err != nil {
		w.log.Error("informer", "err", err)
		return false
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{RateLimiter: limiter})
	defer queue.ShutDown()
	_, err = cms.AddEventHandler(si.EnqueueMapped(queue, func(cm *corev1.ConfigMap) []informer.Key {
		key, err := informer.ParseKey(sharding.RingKey(cm))
		if err != nil {
			return nil
		}
		return []informer.Key{key}
	}))
	if err != nil {
		return false
	}
	told := newHandlerStream()
	if _, err := cms.AddEventHandler(replay[*corev1.ConfigMap](told, func(wrong string) {
		w.breakStream(r.name, ring, member, wrong)
	})); err != nil {
		return false
	}
	factory.Start(ctx)
	defer factory.Wait()
	if factory.WaitForCacheSync(ctx) != nil {
		return ctx.Err() != nil
	}
	r.setTerm(ring, &openTerm{member: member, selector: sel,
		cache: func() map[string]string { return cacheOf(cms.Lister().List(nil)) }, told: told.byName})
	ctl := &controller{w: w, r: r, ring: ring, member: member, setup: w.setups.Add(1), cms: cms, client: client,
		writeTimeout: (t.Lease - t.Renew) / 2, work: t.Work}
	guard, err := readyourwrites.New(readyourwrites.Options{Name: ring, MaxHold: guardMaxHold, Clock: r.clock(), OpaqueResourceVersions: w.opaqueGuards, Trace: func(e informer.TraceEvent) {
		if e.Kind == readyourwrites.KindStale {
			w.hist.add(Event{What: Stale, Replica: r.name, Ring: ring, Member: member, Key: e.Key, Setup: ctl.setup})
		}
	}})
	if err != nil {
		return false
	}
	defer guard.Close()
	ctl.written = readyourwrites.Track(guard, cms)
	workqueue.Run(ctx, queue, wrap(cms, ctl), workqueue.RunOptions[informer.Key]{Workers: 2, Gate: guard, OnError: func(key informer.Key, err error) {
		w.log.Debug("simulation: reconcile failed", "replica", r.name, "ring", ring, "member", member, "key", key, "err", err)
	}})
	return true
}
