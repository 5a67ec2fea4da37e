package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/expectations"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

const (
	roleLabel   = "role"   // "parent" or "child"
	parentLabel = "parent" // on a child: its parent's name
	// countAnnotation is the parent's "status": how many children the
	// controller saw the last time everything was in place.
	countAnnotation = "listwatch.example/children"
)

type controller struct {
	client *rest.RESTClient
	ns     string
	cms    *lister.Lister[*corev1.ConfigMap]
	queue  *workqueue.Queue[informer.Key]
	exp    *expectations.Expectations[informer.Key] // per parent: creates and deletes in flight
	log    *logger
	stats  stats
}

type stats struct{ reconciles, creates, updates, deletes, conflicts, waits atomic.Int64 }

func (s *stats) String() string {
	return fmt.Sprintf("%d reconciles, %d creates, %d updates, %d deletes, %d conflicts requeued, %d waits on expectations",
		s.reconciles.Load(), s.creates.Load(), s.updates.Load(), s.deletes.Load(), s.conflicts.Load(), s.waits.Load())
}

// handler turns every event into a parent's key, and does nothing else
// (pitfall 5: handlers must be quick). Whatever changed, the worker will
// look at the whole parent and all its children.
func (c *controller) handler() sharedinformer.Handler[*corev1.ConfigMap] {
	return sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, _ bool) {
			if owner, ok := ownerKey(cm); ok {
				c.exp.CreationObserved(owner) // one of our creates came back
			}
			c.enqueue(cm)
		},
		UpdateFunc: func(_, cm *corev1.ConfigMap) { c.enqueue(cm) },
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) {
			// Final state unknown or not, the answer is the same: look
			// again at the parent. That is what level-triggered means.
			if owner, ok := ownerKey(cm); ok {
				c.exp.DeletionObserved(owner)
			}
			c.enqueue(cm)
		},
	}
}

func (c *controller) enqueue(cm *corev1.ConfigMap) {
	switch cm.Labels[roleLabel] {
	case "parent":
		c.queue.Add(informer.Key{Namespace: cm.Namespace, Name: cm.Name})
	case "child":
		if owner, ok := ownerKey(cm); ok {
			c.queue.Add(owner)
		}
	}
}

// ownerKey maps a child to its parent's key: through the ownerReference the
// controller set, or the parent label when there is none.
func ownerKey(cm *corev1.ConfigMap) (informer.Key, bool) {
	if cm.Labels[roleLabel] != "child" {
		return informer.Key{}, false
	}
	if ref := metav1.GetControllerOf(cm); ref != nil && ref.Kind == "ConfigMap" {
		return informer.Key{Namespace: cm.Namespace, Name: ref.Name}, true
	}
	if p := cm.Labels[parentLabel]; p != "" {
		return informer.Key{Namespace: cm.Namespace, Name: p}, true
	}
	return informer.Key{}, false
}

// reconcile makes one parent's children match it. It reads only the cache,
// and writes only what differs. An error requeues the key with backoff; a
// terminal one does not.
func (c *controller) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	c.stats.reconciles.Add(1)
	children := c.cms.Namespace(key.Namespace).List(labels.SelectorFromSet(labels.Set{roleLabel: "child", parentLabel: key.Name}))
	slices.SortFunc(children, func(a, b *corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })

	parent, err := c.cms.Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		// The parent is gone. With a garbage collector, the ownerReferences
		// would take the children with it; we do not count on one.
		c.exp.Forget(key)
		for _, child := range children {
			c.log.say("  %-12s parent gone: deleting its child %s", key.Name, child.Name)
			if err := c.delete(ctx, child); err != nil {
				return workqueue.Result{}, err
			}
		}
		return workqueue.Result{}, nil
	}
	if err != nil {
		return workqueue.Result{}, err
	}
	// Pitfall 3: if our own creates or deletes have not reached the cache
	// yet, the cache's count is wrong. Do nothing now; their events bring
	// the key back. If an event was lost, nothing would: so ask to come
	// back by ourselves once the expectation expires.
	if !c.exp.Satisfied(key) {
		c.stats.waits.Add(1)
		wait := c.exp.ExpiresIn(key)
		c.log.say("  %-12s our earlier writes are not in the cache yet: waiting for them (at most %v)", key.Name, wait.Round(time.Second))
		return workqueue.Result{RequeueAfter: wait}, nil
	}
	want, err := strconv.Atoi(parent.Data["replicas"])
	if err != nil || want < 0 {
		// Retrying cannot fix bad input: a terminal error is reported
		// once, and the parent's next edit brings the key back.
		return workqueue.Result{}, workqueue.Terminal(fmt.Errorf("data.replicas=%q is not a count", parent.Data["replicas"]))
	}
	value := parent.Data["value"]

	switch have := len(children); {
	case have < want:
		missing := want - have
		c.log.say("  %-12s want %s, the cache holds %d: creating %d", key.Name, plural(want), have, missing)
		c.exp.ExpectCreations(key, missing) // before the creates: their events may beat us back
		for sent := range missing {
			if err := c.create(ctx, parent, value); err != nil {
				// No event will come for this create, nor for those we
				// will not send now: lower the expectation for each.
				for range missing - sent {
					c.exp.CreationObserved(key)
				}
				return workqueue.Result{}, err
			}
		}
		return workqueue.Result{}, nil // the creates' events will bring us back to write the status
	case have > want:
		extra := children[want:]
		c.log.say("  %-12s want %s, the cache holds %d: deleting %d", key.Name, plural(want), have, len(extra))
		c.exp.ExpectDeletions(key, len(extra))
		for sent, child := range extra {
			if err := c.delete(ctx, child); err != nil {
				// delete lowered the expectation for this one; lower it
				// for those we will not send either.
				for range len(extra) - sent - 1 {
					c.exp.DeletionObserved(key)
				}
				return workqueue.Result{}, err
			}
		}
		return workqueue.Result{}, nil
	}

	// The right number of children. Is each one right? Update only those
	// that drifted; an object that is right costs no request.
	for _, child := range children {
		if child.Data["value"] == value {
			continue
		}
		fixed := child.DeepCopy() // pitfall 2: never modify the cache's copy
		fixed.Data = map[string]string{"value": value}
		c.log.say("  %-12s child %s has value %q, want %q: updating", key.Name, child.Name, child.Data["value"], value)
		if err := c.update(ctx, fixed); err != nil {
			return workqueue.Result{}, err
		}
	}

	// The parent's status, written only when it changes.
	count := strconv.Itoa(len(children))
	if parent.Annotations[countAnnotation] == count {
		c.log.say("  %-12s in sync (children: %d, value %q): nothing to write", key.Name, len(children), value)
		return workqueue.Result{}, nil
	}
	p := parent.DeepCopy()
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[countAnnotation] = count
	c.log.say("  %-12s children in place (%d): writing the count into the parent", key.Name, len(children))
	return workqueue.Result{}, c.update(ctx, p)
}

func (c *controller) create(ctx context.Context, parent *corev1.ConfigMap, value string) error {
	child := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			// A generated name: two creates are two children. That is why
			// the expectations above matter.
			GenerateName: parent.Name + "-",
			Labels:       map[string]string{roleLabel: "child", parentLabel: parent.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent,
				corev1.SchemeGroupVersion.WithKind("ConfigMap"))},
		},
		Data: map[string]string{"value": value},
	}
	c.stats.creates.Add(1)
	return c.client.Post().Namespace(parent.Namespace).Resource("configmaps").Body(child).Do(ctx).Error()
}

// update sends obj with the resourceVersion the cache had. If someone
// changed the object since, the server answers 409 Conflict: our view was
// stale, so we requeue and decide again from the newer state.
func (c *controller) update(ctx context.Context, obj *corev1.ConfigMap) error {
	c.stats.updates.Add(1)
	err := c.client.Put().Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(obj).Do(ctx).Error()
	if apierrors.IsConflict(err) {
		c.stats.conflicts.Add(1)
		c.log.say("  %-12s 409 Conflict on %s: the cache was behind the server; requeue and look again", ownerName(obj), obj.Name)
	}
	return err
}

// delete deletes a child. If the delete fails, or the child was already
// gone, no event will come for our delete: we lower the expectation here.
func (c *controller) delete(ctx context.Context, obj *corev1.ConfigMap) error {
	c.stats.deletes.Add(1)
	err := c.client.Delete().Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Do(ctx).Error()
	if err != nil {
		if owner, ok := ownerKey(obj); ok {
			c.exp.DeletionObserved(owner)
		}
	}
	if apierrors.IsNotFound(err) {
		return nil // someone beat us to it: fine, that is the state we want
	}
	return err
}

func ownerName(cm *corev1.ConfigMap) string {
	if k, ok := ownerKey(cm); ok {
		return k.Name
	}
	return cm.Name
}

func plural(n int) string {
	if n == 1 {
		return "1 child"
	}
	return strconv.Itoa(n) + " children"
}
