package sharding

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
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
}

// shard runs the elected sharder's work until ctx ends: every object
// event and every membership change enqueues keys, and workers bring
// each key's labels one step closer to what the ring says (decide).
func (s *Sharder) shard(ctx context.Context) error {
	// The scheme only decodes the API server's answers to PATCH: the
	// sharder reads nothing but metadata.
	scheme := runtime.NewScheme()
	for _, gvr := range s.cfg.Resources {
		metav1.AddToGroupVersion(scheme, gvr.GroupVersion())
	}
	factory, err := si.NewFactory(s.cfg.Config, si.FactoryOptions{Scheme: scheme, Logger: s.cfg.Logger})
	if err != nil {
		return err
	}
	var resources []*resource
	for _, gvr := range s.cfg.Resources {
		objects, err1 := si.InformerFor[*metav1.PartialObjectMetadata](ctx, factory, si.ForResource(gvr), si.InNamespace(s.cfg.Namespace))
		client, err2 := factory.RESTClient(gvr.GroupVersion())
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		r := &resource{gvr: gvr, objects: objects, client: client, queue: workqueue.New(workqueue.Options[informer.Key]{})}
		defer r.queue.ShutDown()
		if _, err := objects.AddEventHandler(si.EnqueueKey[*metav1.PartialObjectMetadata](r.queue)); err != nil {
			return err
		}
		resources = append(resources, r)
	}
	factory.Start(ctx)
	defer factory.Wait()
	if err := factory.WaitForCacheSync(ctx); err != nil {
		return err
	}

	ring := &liveRing{}
	done := make(chan struct{})
	for _, r := range resources {
		go func() {
			defer func() { done <- struct{}{} }()
			workqueue.Run(ctx, r.queue, func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
				return workqueue.Result{}, s.decide(ctx, r, ring, key)
			}, workqueue.RunOptions[informer.Key]{Workers: s.cfg.Workers, OnError: func(key informer.Key, err error) {
				s.cfg.Logger.Warn("sharding: labelling failed", "resource", r.gvr.Resource, "key", key, "err", err)
			}})
		}()
	}
	s.watchMembers(ctx, ring, resources)
	for range resources {
		<-done
	}
	return nil
}

// watchMembers rebuilds the ring whenever the alive members change, and
// then enqueues every key, until ctx ends. Once a LeaseDuration it
// deletes the Leases of dead members that own nothing (collectLeases).
func (s *Sharder) watchMembers(ctx context.Context, ring *liveRing, resources []*resource) {
	var collected time.Time
	for {
		if time.Since(collected) >= s.cfg.LeaseDuration {
			s.collectLeases(ctx, resources)
			collected = time.Now()
		}
		alive, _ := s.members.alive()
		changed, err := ring.update(alive, s.cfg.VirtualNodes)
		if err != nil {
			s.cfg.Logger.Error("sharding: building the ring", "err", err)
		}
		if changed {
			s.cfg.Logger.Info("sharding: members changed", "ring", s.cfg.Ring, "members", alive)
			for _, r := range resources {
				for _, obj := range r.objects.Lister().List(nil) {
					r.queue.Add(informer.KeyFor(obj))
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.cfg.RetryPeriod / 4):
		}
	}
}

// decide brings one object's labels one step toward the ring:
//
//	label  drain  label's member alive  ring says  action
//	none   -      -                     m          assign: label m
//	x      any    no                    m          move: label m, no drain (x's term is over)
//	x      no     yes                   x          nothing
//	x      no     yes                   m ≠ x      drain: ask x to let go
//	x      yes    yes                   x          undrain (the ring changed back)
//	x      yes    yes                   m ≠ x      nothing: x acknowledges by removing both labels
//
// An object with a controller owner is never drained: it moves with
// (the key of) its owner directly. Every PATCH carries the
// resourceVersion the sharder's cache holds, so a change it has not seen
// yet fails it with 409; that change's event brings the key back.
func (s *Sharder) decide(ctx context.Context, r *resource, ring *liveRing, key informer.Key) error {
	obj, err := getMeta(r, key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	shard := Shard{Ring: s.cfg.Ring}
	current, draining := obj.Labels[shard.Label()], obj.Labels[shard.DrainLabel()] != ""
	want, currentAlive := ring.owner(RingKey(obj), current)
	if want == "" {
		return nil // no member alive: the object waits, unlabelled or with its dead owner
	}
	child := metav1.GetControllerOf(obj) != nil
	var action string
	labels := map[string]*string{}
	switch {
	case current == "":
		action, labels[shard.Label()] = "assign", &want
	case !currentAlive || (child && current != want):
		action, labels[shard.Label()], labels[shard.DrainLabel()] = "move", &want, nil
	case current == want && draining:
		action, labels[shard.DrainLabel()] = "undrain", nil
		want = ""
	case current != want && !draining:
		yes := "true"
		action, labels[shard.DrainLabel()] = "drain", &yes
	default:
		return nil
	}
	patch, err := labelPatch(obj.ResourceVersion, labels)
	if err != nil {
		return err
	}
	err = r.client.Patch(types.MergePatchType).NamespaceIfScoped(key.Namespace, key.Namespace != "").
		Resource(r.gvr.Resource).Name(key.Name).Body(patch).Do(ctx).Error()
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sharding: %s %s %s: %w", action, r.gvr.Resource, key, err)
	}
	if s.cfg.OnLabel != nil {
		s.cfg.OnLabel(action, key, want)
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
