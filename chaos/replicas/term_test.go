package replicas

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/leaderelection"
	"github.com/listwatch/informer/sharding"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// appLabel marks every object of the run, parents and children.
const appLabel = "app=chaos-replicas"

// reconciledBy is the annotation a ring's reconcile keeps at
// "<member>/<tick>": who reconciled the object last, and which version
// of its data it saw.
func reconciledBy(ring string) string { return "chaos.listwatch.dev/reconciled-by-" + ring }

// childName is the deterministic name of parent's child in ring: one per
// parent and ring, so a second create can only answer AlreadyExists.
func childName(parent, ring string) string { return parent + "-" + ring }

// runTerm is one member's term: an informer over the ConfigMaps labelled
// for this member, and workers that reconcile parents with controller.
func runTerm(ctx context.Context, cfg *rest.Config, c replicaConfig, shard sharding.Shard, term leaderelection.Term, rec *recorder, logger *slog.Logger) {
	scheme := k8sruntime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return
	}
	factory, err := si.NewFactory(cfg, si.FactoryOptions{Scheme: scheme, Logger: logger})
	if err != nil {
		logger.Error("factory", "err", err)
		return
	}
	// After a 403 window a member must soon see its objects again and
	// retry its failed drains (sharding.RetryTuning, RetryLimiter).
	cms, err1 := si.InformerFor[*corev1.ConfigMap](ctx, factory, si.InNamespace(c.Namespace), si.WithLabels(shard.Selector()),
		si.WithReflector(sharding.RetryTuning(c.Timing.Lease)))
	client, err2 := factory.RESTClient(corev1.SchemeGroupVersion)
	limiter, err := sharding.RetryLimiter(c.Timing.Lease)
	if err != nil {
		logger.Error("limiter", "err", err)
		return
	}
	queue := workqueue.New(workqueue.Options[informer.Key]{RateLimiter: limiter})
	defer queue.ShutDown()
	// A child's events enqueue its parent: the queue holds ring keys only.
	_, err3 := cms.AddEventHandler(si.EnqueueMapped(queue, func(cm *corev1.ConfigMap) []informer.Key {
		key, err := informer.ParseKey(sharding.RingKey(cm))
		if err != nil {
			return nil
		}
		return []informer.Key{key}
	}))
	if err := errors.Join(err1, err2, err3); err != nil {
		logger.Error("informer", "err", err)
		return
	}
	factory.Start(ctx)
	defer factory.Wait()
	if factory.WaitForCacheSync(ctx) != nil {
		return
	}
	ctl := &controller{term: term, shard: shard, cms: cms, client: client, rec: rec, timing: c.Timing}
	workqueue.Run(ctx, queue, sharding.Reconciler(shard, cms.Lister(), client, "configmaps", ctl.reconcile),
		workqueue.RunOptions[informer.Key]{Workers: 4, OnError: func(key informer.Key, err error) {}})
}

// controller is one term's reconcile: it brings the parent's and its
// child's reconciledBy annotation to "<member>/<tick>", creating the
// child if this member's cache lacks it. Every write is a merge PATCH
// that carries the resourceVersion the cache holds, so the API server
// refuses it (409) if anyone wrote the object since.
type controller struct {
	term   leaderelection.Term // its End is the term's end, moved later by every renew
	shard  sharding.Shard
	cms    *si.Informer[*corev1.ConfigMap]
	client *rest.RESTClient
	rec    *recorder
	timing timing
}

func (ctl *controller) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	ring, member := ctl.shard.Ring, ctl.shard.Member
	ctl.rec.say("B %s %s %s", ring, member, key)
	defer ctl.rec.say("E %s %s %s", ring, member, key)
	parent, err := ctl.cms.Lister().Namespace(key.Namespace).Get(key.Name)
	if err != nil {
		return workqueue.Result{}, nil // gone from the cache since Reconciler looked: not ours
	}
	select { // the work between the read and the writes: the window a pause can fall into
	case <-ctx.Done():
		return workqueue.Result{}, nil
	case <-time.After(ctl.timing.Work):
	}
	// The writes are sent on a context detached from the term, bounded
	// by writeTimeout. A request already on the wire when a process is
	// paused is not stopped by its context either: this way every write a
	// resumed replica attempts after its term ended reaches the API
	// server, and the checker sees what the resourceVersion guard makes
	// of it.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ctl.timing.writeTimeout())
	defer cancel()
	want := member + "/" + parent.Data["tick"]
	ok := true
	if parent.Annotations[reconciledBy(ring)] != want {
		ok = ctl.write(wctx, key, parent, want)
	}
	child, err := ctl.cms.Lister().Namespace(key.Namespace).Get(childName(key.Name, ring))
	switch {
	case apierrors.IsNotFound(err):
		ok = ctl.create(wctx, key, parent, want) && ok
	case err != nil:
		ok = false
	case child.Annotations[reconciledBy(ring)] != want:
		ok = ctl.write(wctx, key, child, want) && ok
	}
	if !ok { // a fixed retry, not the queue's growing backoff: a refusal (403) may last seconds
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	return workqueue.Result{}, nil
}

// write sets obj's reconciledBy annotation to want, guarded by the
// resourceVersion obj was read at, and prints the outcome, and whether
// it was sent after the term's deadline.
func (ctl *controller) write(ctx context.Context, key informer.Key, obj *corev1.ConfigMap, want string) bool {
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, obj.ResourceVersion, reconciledBy(ctl.shard.Ring), want)
	sent := time.Now()
	deadline := ctl.term.End()
	err := ctl.client.Patch(types.MergePatchType).Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(patch).Do(ctx).Error()
	late := 0
	if sent.After(deadline) {
		late = 1
	}
	ctl.rec.say("W %s %s %s %s %s %d %d", ctl.shard.Ring, ctl.shard.Member, key, obj.Name, outcome(err), late, sent.UnixNano())
	return err == nil
}

// create makes parent's child for this ring, owned by parent (a
// controller reference, so the sharder places it at the parent's key).
func (ctl *controller) create(ctx context.Context, key informer.Key, parent *corev1.ConfigMap, want string) bool {
	name := childName(parent.Name, ctl.shard.Ring)
	yes := true
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: parent.Namespace,
		Labels:      map[string]string{"app": "chaos-replicas"},
		Annotations: map[string]string{reconciledBy(ctl.shard.Ring): want},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID,
			Controller: &yes}},
	}}
	err := ctl.client.Post().Namespace(parent.Namespace).Resource("configmaps").Body(child).Do(ctx).Error()
	ctl.rec.say("C %s %s %s %s %s", ctl.shard.Ring, ctl.shard.Member, key, name, outcome(err))
	return err == nil || apierrors.IsAlreadyExists(err)
}

// writeTimeout bounds a reconcile's writes together: half of
// LeaseDuration − RenewDeadline, the least time between a member's
// deadline and the moment the sharder can judge it dead. Writes begun
// before the deadline so end before any other member can be given the
// object, even behind a partition, with half of that time to spare for
// the sharder's own steps and a busy machine.
func (t timing) writeTimeout() time.Duration { return (t.Lease - t.Renew) / 2 }

// outcome names a write's result in one word.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case apierrors.IsConflict(err):
		return "conflict"
	case apierrors.IsAlreadyExists(err):
		return "exists"
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsNotFound(err):
		return "notfound"
	case errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err):
		return "timeout"
	}
	return "error"
}
