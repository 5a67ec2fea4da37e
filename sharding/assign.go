package sharding

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/indexer"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// resource is one sharded resource as the elected sharder works on it: a
// metadata-only informer over all of its objects (not 1/N: the sharder
// must see the unlabelled ones), a queue of keys, and a client for PATCH.
type resource struct {
	gvr     schema.GroupVersionResource
	objects *si.Informer[*metav1.PartialObjectMetadata]
	queue   *workqueue.Queue[informer.Key]
	client  *rest.RESTClient
	// clock and timeout bound each request of client (see request).
	clock   informer.Clock
	timeout time.Duration
}

// request bounds one request to the API server: one that a stalled
// server never answers fails after the sharder's request timeout, and
// its key is retried, instead of holding a worker, and the objects
// behind it, for as long as the term lasts.
func (r *resource) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return informer.WithTimeout(ctx, r.clock, r.timeout)
}

// patchLabels sets (or, for nil, removes) labels on key, guarded by
// resourceVersion rv (see labelPatch), in one bounded request.
func (r *resource) patchLabels(ctx context.Context, key informer.Key, rv string, labels map[string]*string) error {
	patch, err := labelPatch(rv, labels)
	if err != nil {
		return err
	}
	ctx, cancel := r.request(ctx)
	defer cancel()
	return r.client.Patch(types.MergePatchType).NamespaceIfScoped(key.Namespace, key.Namespace != "").
		Resource(r.gvr.Resource).Name(key.Name).Body(patch).Do(ctx).Error()
}

// informerName names the sharder's informer of gvr in ring, in logs
// and metrics: the same every term, and another in every ring.
func informerName(ring string, gvr schema.GroupVersionResource) string {
	return fmt.Sprintf("%s of the sharder of ring %s (metadata only)", gvr.GroupResource(), ring)
}

// shard runs the elected sharder's work until ctx ends: every object
// event and every membership change enqueues keys, and workers bring
// each key's labels one step closer to what the ring says (decide). It
// returns an error, for lead to retry, when its informers cannot be made
// or do not sync within SyncTimeout; by then everything it started has
// stopped, so a retry starts from nothing.
func (s *Sharder) shard(ctx context.Context) error {
	// The scheme only decodes the API server's answers: the sharder reads
	// nothing but metadata.
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil { // PartialObjectMetadata, for freshMeta
		return err
	}
	for _, gvr := range s.cfg.Resources {
		metav1.AddToGroupVersion(scheme, gvr.GroupVersion())
	}
	factory, err := si.NewFactory(s.cfg.Config, si.FactoryOptions{Scheme: scheme, Logger: s.cfg.Logger,
		SyncTimeout: s.cfg.SyncTimeout, Metrics: s.cfg.Metrics})
	if err != nil {
		return err
	}
	// The informers run on a context of this attempt's own: a failed
	// attempt stops them before it returns. Starting the factory again
	// with that context ended stops any informer made but not yet
	// started, which gives back its metrics' names for the next attempt.
	running, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		factory.Start(running)
		factory.Wait()
	}()
	var resources []*resource
	for _, gvr := range s.cfg.Resources {
		// After a fault that refused everything (see retry.go) the
		// sharder sees and retries within a lease or two of its end.
		// Its name carries the ring: the sharders of two rings over one
		// resource, in one process with one metrics Registry, would
		// otherwise claim one name, and the second could never sync
		// (TestTheShardersOfTwoRingsOverOneResourceShareAMetricsRegistry).
		objects, err1 := si.InformerFor[*metav1.PartialObjectMetadata](ctx, factory, si.ForResource(gvr), si.InNamespace(s.cfg.Namespace),
			si.WithName(informerName(s.cfg.Ring, gvr)),
			si.WithIndexers(map[string]indexer.IndexFunc[*metav1.PartialObjectMetadata]{controllerIndex: controllerUID}),
			si.WithReflector(RetryTuning(s.cfg.LeaseDuration)))
		client, err2 := factory.RESTClient(gvr.GroupVersion())
		limiter, err3 := RetryLimiter(s.cfg.LeaseDuration)
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		r := &resource{gvr: gvr, objects: objects, client: client, clock: s.cfg.Clock, timeout: s.members.timeout,
			queue: workqueue.New(workqueue.Options[informer.Key]{RateLimiter: limiter})}
		defer r.queue.ShutDown()
		if _, err := objects.AddEventHandler(si.EnqueueKey[*metav1.PartialObjectMetadata](r.queue)); err != nil {
			return err
		}
		resources = append(resources, r)
	}
	shard := Shard{Ring: s.cfg.Ring}
	for _, r := range resources {
		if _, err := r.objects.AddEventHandler(si.HandlerFuncs[*metav1.PartialObjectMetadata]{
			// A child waits while its parent is unlabelled or draining
			// (decideChild) and is not queued again by waiting: when the
			// parent settles, its children get their turn, whichever of
			// the keys came first.
			UpdateFunc: func(old, obj *metav1.PartialObjectMetadata) {
				if old.Labels[shard.Label()] != obj.Labels[shard.Label()] || old.Labels[shard.DrainLabel()] != obj.Labels[shard.DrainLabel()] {
					s.enqueueChildren(resources, obj.UID)
				}
			},
			DeleteFunc: func(obj *metav1.PartialObjectMetadata, _ bool) { s.enqueueChildren(resources, obj.UID) },
		}); err != nil {
			return err
		}
	}
	factory.Start(running)
	if err := factory.WaitForCacheSync(running); err != nil {
		return err
	}

	ring := &liveRing{}
	var workers sync.WaitGroup
	for _, r := range resources {
		workers.Go(func() {
			workqueue.Run(ctx, r.queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				err := s.decide(ctx, r, resources, ring, key)
				if errors.Is(err, errChildChanged) {
					return workqueue.Result{RequeueAfter: childRetry}, nil
				}
				return workqueue.Result{}, err
			}, workqueue.RunOptions[informer.Key]{Workers: s.cfg.Workers, OnError: func(key informer.Key, err error) {
				s.cfg.Logger.Warn("sharding: labelling failed", "resource", r.gvr.Resource, "key", key, "err", err)
			}})
		})
	}
	s.watchMembers(ctx, ring, resources)
	workers.Wait()
	return nil
}

// watchMembers rebuilds the ring whenever the alive members change,
// takes over the Leases of members that look dead, and enqueues every
// key when the ring changed or a member became dead for certain, until
// ctx ends. Once a LeaseDuration it deletes the Leases of dead members
// that own nothing (collectLeases).
//
// A member becomes dead for certain by a takeover this loop wrote, or by
// a Lease a poll found released or taken over: a member's own release
// that a stalled server served late, after the member had already
// dropped off the ring, makes the takeover fail with 409; a takeover
// whose answer was lost reports nothing written. Only the poll tells.
// Either way its objects, left waiting while it was "not seen alive"
// (decide), must be decided again; so must they when a member is dead
// again under a new Lease (a new resourceVersion).
func (s *Sharder) watchMembers(ctx context.Context, ring *liveRing, resources []*resource) {
	var collected time.Time
	var dead map[string]string // the members dead for certain at the last look
	for {
		if s.cfg.Clock.Now().Sub(collected) >= s.cfg.LeaseDuration {
			s.collectLeases(ctx, resources)
			collected = s.cfg.Clock.Now()
		}
		alive, _ := s.members.alive()
		changed, err := ring.update(alive, s.cfg.VirtualNodes)
		if err != nil {
			s.cfg.Logger.Error("sharding: building the ring", "err", err)
		}
		if changed {
			s.cfg.Logger.Info("sharding: members changed", "ring", s.cfg.Ring, "members", alive)
		}
		tookOver := s.takeOverSuspects(ctx, resources)
		now := s.members.dead()
		died := false
		for id, rv := range now {
			died = died || dead[id] != rv // dead since the last look, or dead again by a new Lease
		}
		dead = now
		if changed || tookOver || died {
			for _, r := range resources {
				for _, obj := range r.objects.Lister().List(nil) {
					r.queue.Add(informer.KeyFor(obj))
				}
			}
		}
		if !informer.Sleep(ctx, s.cfg.Clock, s.cfg.RetryPeriod/4) {
			return
		}
	}
}

// takeOverSuspects takes over the Lease of every member that looks dead
// (unchanged or absent for its lease duration) but is not dead for
// certain, and reports whether any takeover was written. A member's
// objects move only once it is dead for certain: by such a takeover, or
// by a Lease a poll finds released or taken over (see watchMembers). The
// suspects are judged once, and each takeover is guarded by the version
// judged: a member that renewed since — while an earlier takeover hung,
// say — makes the write fail, and keeps its objects.
//
// A suspect whose Lease is absent (deleted by someone) and that no object
// names is forgotten instead: there is nothing to move, and a takeover
// would create its Lease only for collectLeases to delete it. Forgetting
// is safe because it decides nothing: the member is off the ring either
// way, and an object that names it later, seen late by a lagging cache,
// has it tracked and judged afresh (decide)
// (TestALeaderCreatesNoLeaseForAMemberThatOwnsNothingWhoseLeaseWasDeleted).
// The caches are read just before the forget (a takeover before it may
// have hung for its timeout), and again after it: an object decided in
// between found the member still tracked, so its track did nothing, and
// the member is tracked again here
// (TestAnObjectThatNamesAMemberSeenWhileAnotherTakeoverHangsIsNotStrandedByItsForget).
func (s *Sharder) takeOverSuspects(ctx context.Context, resources []*resource) bool {
	took := false
	for _, sus := range s.members.suspects() {
		if sus.judged.lease == nil && !s.namedMembers(resources)[sus.id] {
			s.members.forget(sus.id)
			if s.namedMembers(resources)[sus.id] {
				s.members.track(sus.id)
			}
			continue
		}
		taken, err := s.members.takeOver(ctx, sus, takenOverBy(s.cfg.Identity))
		if errors.Is(err, errUnseen) {
			continue // neither taken nor found alive: judged again
		}
		if err != nil {
			if ctx.Err() == nil {
				s.cfg.Logger.Warn("sharding: taking over a member's Lease", "member", sus.id, "err", err)
			}
			continue
		}
		s.metrics.tookOver(taken)
		if taken {
			s.cfg.Logger.Info("sharding: member taken over: its objects move", "ring", s.cfg.Ring, "member", sus.id)
			took = true
		}
	}
	return took
}

// takenOverBy is the holder a sharder writes into a member Lease it takes
// over: never a member id, so the member's next renew fails.
func takenOverBy(identity string) string { return "taken-over-by-sharder:" + identity }

// decide brings one object's labels one step toward the ring:
//
//	label  drain  member x of the label  ring says  action
//	none   -      -                      m          assign: label m
//	x      any    no possible member     m          assign: label m, no drain
//	x      any    dead for certain       m          move: label m, no drain
//	x      any    not seen alive         -          nothing yet: decided again once x is dead for certain
//	x      no     alive                  x          nothing
//	x      no     alive                  m ≠ x      drain: ask x to let go
//	x      yes    alive                  x          undrain (the ring changed back)
//	x      yes    alive                  m ≠ x      nothing: x acknowledges by removing both labels (a drain for its controller now)
//	x      stale  alive                  m ≠ x      drain anew, for its controller now (staleDrain)
//
// An object whose controller owner is not in the sharder's caches (not
// sharded, or deleted) is decided by this table like any other: its
// member may reconcile it under its own key (EnqueueKey does), so it too
// leaves a live member only by a drain. Before it acts on one, the
// sharder asks the API server for the owner (ownerLags): one that exists
// in a sharded resource is a parent the cache has not seen yet, and the
// object waits for it as a child.
//
// "Dead for certain" is a member whose Lease it released, or a sharder
// took over: never one merely not seen renewing. "No possible member" is
// a label value that cannot be part of a Lease name (possibleMember): no
// member holds the object, so it is assigned as if unlabelled, and the
// value is logged once.
//
// A child (an object whose controller owner is a sharded object in the
// cache) is never decided by the ring: it follows its parent (see
// decideChild), and a parent that is assigned or moved takes its
// children along first (moveChildren). Every PATCH carries the
// resourceVersion the sharder's cache holds, so a change it has not seen
// yet fails it with 409; that change's event brings the key back.
func (s *Sharder) decide(ctx context.Context, r *resource, all []*resource, ring *liveRing, key informer.Key) error {
	obj, err := getMeta(r, key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	shard := Shard{Ring: s.cfg.Ring}
	if parent, pr := parentOf(obj, all); parent != nil {
		return s.decideChild(ctx, r, key, obj, pr, parent, ring, all)
	}
	current, draining := obj.Labels[shard.Label()], obj.Labels[shard.DrainLabel()] != ""
	want, currentAlive := ring.owner(RingKey(obj), current)
	if want == "" {
		return nil // no member alive: the object waits, unlabelled or with its owner
	}
	stray := current != "" && !possibleMember(s.cfg.Ring, current)
	if stray {
		s.reportStray(r, key, current)
	}
	var action string
	labels := map[string]*string{}
	switch {
	case current == "" || stray:
		action, labels[shard.Label()], labels[shard.DrainLabel()] = "assign", &want, nil
	case currentAlive:
		switch {
		case current == want && draining:
			action, labels[shard.DrainLabel()] = "undrain", nil
		case current != want && (!draining || shard.staleDrain(obj)):
			yes := drainValue(obj)
			action, labels[shard.DrainLabel()] = "drain", &yes
		default:
			return nil
		}
	case s.members.deadForCertain(current):
		action, labels[shard.Label()], labels[shard.DrainLabel()] = "move", &want, nil
	default:
		s.members.track(current) // not seen alive is not dead: judge it, take it over (or see it released), then move
		return nil
	}
	// An owner missing from the cache may only be late (its watch lags):
	// ask the API server before acting on an orphan.
	if err := ownerLags(ctx, obj, all); err != nil {
		return err
	}
	if action == "assign" || action == "move" {
		if err := s.moveChildren(ctx, r, obj, want, ring, all); err != nil {
			return err
		}
	}
	if action == "undrain" {
		want = ""
	}
	return s.patch(ctx, r, key, obj.ResourceVersion, action, labels, want)
}

// reportStray logs, once per value, that key's shard label names no
// possible member and that its objects are assigned by the ring.
func (s *Sharder) reportStray(r *resource, key informer.Key, value string) {
	if _, seen := s.strays.LoadOrStore(value, true); !seen {
		s.cfg.Logger.Warn("sharding: a shard label names no possible member (it cannot be part of a Lease name); its objects are assigned by the ring",
			"ring", s.cfg.Ring, "label", value, "resource", r.gvr.Resource, "first", key)
	}
}

// patch writes labels on key, guarded by rv, and reports the action.
// NotFound and Conflict are no error: the object's next event (or none,
// for a delete) brings the key back if anything is left to do.
func (s *Sharder) patch(ctx context.Context, r *resource, key informer.Key, rv, action string, labels map[string]*string, member string) error {
	err := r.patchLabels(ctx, key, rv, labels)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharding: %s %s %s: %w", action, r.gvr.Resource, key, err)
	}
	if s.cfg.OnLabel != nil {
		s.cfg.OnLabel(action, key, member)
	}
	return nil
}

// getMeta reads key from r's cache.
func getMeta(r *resource, key informer.Key) (*metav1.PartialObjectMetadata, error) {
	if key.Namespace == "" {
		return r.objects.Lister().Get(key.Name)
	}
	return r.objects.Lister().Namespace(key.Namespace).Get(key.Name)
}
