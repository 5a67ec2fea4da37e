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
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/readyourwrites"
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
	// guard holds a parent's key until the cache shows what its last
	// reconcile wrote; writes records each write under the parent's key.
	guard  *readyourwrites.Guard
	writes *readyourwrites.Cache[*corev1.ConfigMap]
	log    *logger
	stats  stats
}

// newController makes the controller over inf's ConfigMaps in ns. A key
// is held for its own writes for at most maxHold (0: the guard's default).
func newController(client *rest.RESTClient, ns string, inf *sharedinformer.Informer[*corev1.ConfigMap], log *logger, maxHold time.Duration) (*controller, error) {
	c := &controller{client: client, ns: ns, cms: inf.Lister(), log: log,
		queue: workqueue.New(workqueue.Options[informer.Key]{})}
	guard, err := readyourwrites.New(readyourwrites.Options{Name: "04-controller", MaxHold: maxHold,
		Trace: func(e informer.TraceEvent) {
			if e.Kind == readyourwrites.KindHeld {
				c.stats.holds.Add(1)
				c.log.say("  %-12s our last writes are not in the cache yet: held until they are", strings.TrimPrefix(e.Key, ns+"/"))
			}
		}})
	if err != nil {
		return nil, err
	}
	c.guard, c.writes = guard, readyourwrites.Track(guard, inf)
	return c, nil
}

type stats struct{ reconciles, creates, updates, deletes, conflicts, holds atomic.Int64 }

func (s *stats) String() string {
	return fmt.Sprintf("%d reconciles, %d creates, %d updates, %d deletes, %d conflicts requeued, %d holds for our own writes",
		s.reconciles.Load(), s.creates.Load(), s.updates.Load(), s.deletes.Load(), s.conflicts.Load(), s.holds.Load())
}

// handler turns every event into a parent's key, and does nothing else
// (pitfall 5: handlers must be quick). Whatever changed, the worker will
// look at the whole parent and all its children.
func (c *controller) handler() sharedinformer.Handler[*corev1.ConfigMap] {
	return sharedinformer.HandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { c.enqueue(cm) },
		UpdateFunc: func(old, cm *corev1.ConfigMap) { c.enqueue(old); c.enqueue(cm) }, // old: a parent unlabelled, a child moved
		DeleteFunc: func(cm *corev1.ConfigMap, _ bool) {
			// Final state unknown or not, the answer is the same: look
			// again at the parent. That is what level-triggered means.
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
	parent, err := c.cms.Namespace(key.Namespace).Get(key.Name)
	switch {
	case apierrors.IsNotFound(err):
		parent = nil
	case err != nil:
		return workqueue.Result{}, err
	case parent.Labels[roleLabel] != "parent":
		parent = nil // no parent any more (or never one): as if gone, and never written into
	}
	// The labels find the candidates; only a controller reference with
	// the parent's UID makes one its child. Anyone can label a ConfigMap
	// role=child, and a name is reused when a parent is deleted and made
	// anew, a UID never is.
	children, stale := c.childrenOf(key, parent)
	for _, child := range stale {
		// An earlier parent's of this name, or this one's that is gone.
		// With a garbage collector, the ownerReferences would take them;
		// we do not count on one.
		c.log.say("  %-12s parent gone or made anew: deleting the child %s of the old one", key.Name, child.Name)
		if err := c.delete(ctx, key, child); err != nil {
			return workqueue.Result{}, err
		}
	}
	if parent == nil {
		return workqueue.Result{}, nil
	}
	// Pitfall 3, the cache lags our writes, is handled before we get
	// here: workqueue.Run asks the guard, which holds this key until the
	// cache shows every write our last reconcile of it made. So the
	// children listed above include the ones we just created.
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
		for range missing {
			if err := c.create(ctx, key, parent, value); err != nil {
				return workqueue.Result{}, err // the creates sent so far are recorded
			}
		}
		return workqueue.Result{}, nil // the creates' events will bring us back to write the status
	case have > want:
		extra := children[want:]
		c.log.say("  %-12s want %s, the cache holds %d: deleting %d", key.Name, plural(want), have, len(extra))
		for _, child := range extra {
			if err := c.deleteOrRelease(ctx, key, child); err != nil {
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
		err := c.update(ctx, key, fixed)
		if apierrors.IsInvalid(err) && child.Immutable != nil && *child.Immutable {
			// Someone made it immutable: no update can change its data
			// (422). Children are replicas, made and unmade by us as a
			// ReplicaSet's Pods are, so replace it: delete it (that child,
			// by UID), or release it if another owner has it
			// (deleteOrRelease, TestAnImmutableChildASecondLiveOwnerAlsoOwnsIsReleasedNotDeleted);
			// either way it leaves our children, its event brings us
			// back, and the scale logic above makes one carrying the value.
			c.log.say("  %-12s child %s is immutable: replacing it, a new one will carry %q", key.Name, child.Name, value)
			return workqueue.Result{}, c.deleteOrRelease(ctx, key, child)
		}
		if err != nil {
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
	return workqueue.Result{}, c.update(ctx, key, p)
}

// childrenOf sorts the ConfigMaps labelled as children of key's parent
// (nil if it is gone or no longer labelled role=parent): children, which
// parent controls, sorted by name; stale, which a ConfigMap of key's name
// with another UID controls and no other owner still has (an earlier
// parent's, or this one's once it is gone). Any other is a user's or another
// controller's, or still another owner's: neither counted, changed nor
// deleted.
func (c *controller) childrenOf(key informer.Key, parent *corev1.ConfigMap) (children, stale []*corev1.ConfigMap) {
	for _, cm := range c.cms.Namespace(key.Namespace).List(labels.SelectorFromSet(labels.Set{roleLabel: "child", parentLabel: key.Name})) {
		switch ref := metav1.GetControllerOf(cm); {
		case ref == nil || ref.APIVersion != "v1" || ref.Kind != "ConfigMap" || ref.Name != key.Name:
		case parent != nil && ref.UID == parent.UID:
			children = append(children, cm)
		case !c.anotherOwnerHas(cm, ref):
			stale = append(stale, cm)
		default:
			// Another owner still has it: a garbage collector would drop
			// only the gone parent's reference, and we leave it, as the
			// skeleton leaves a Secret with another owner.
		}
	}
	slices.SortFunc(children, func(a, b *corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	return children, stale
}

// anotherOwnerHas reports whether an owner of cm other than the parent
// (gone, or scaling down) that parent references may still exist: a
// ConfigMap the cache holds with that UID, or an owner of another kind,
// which this controller cannot look up and so leaves be. Once every
// other owner is gone, the next reconcile of the parent's name deletes
// a gone parent's child, as a garbage collector would
// (TestAChildLeftForASecondOwnerIsDeletedOnceThatOwnerIsGoneToo).
func (c *controller) anotherOwnerHas(cm *corev1.ConfigMap, parent *metav1.OwnerReference) bool {
	for _, owner := range cm.OwnerReferences {
		if owner.UID == parent.UID {
			continue
		}
		if owner.APIVersion != "v1" || owner.Kind != "ConfigMap" {
			return true
		}
		if other, err := c.cms.Namespace(cm.Namespace).Get(owner.Name); err == nil && other.UID == owner.UID {
			return true
		}
	}
	return false
}

// deleteOrRelease removes child, which owner's parent controls, from the
// parent's children, for a scale-down. A child the parent alone owns is
// deleted. One that another owner may still have (anotherOwnerHas) is
// released instead, completely: its copy, with the parent's owner
// reference and our labels (role=child, parent=<name>) dropped, is
// written back, the other owners' references, other labels and data left
// as they are. Deleting it would take it from an owner that still wants
// it, which the garbage collector never does (an owner deleted, a child
// another owner still has loses only that owner's reference), and which
// this controller does not do for a gone parent's child either
// (childrenOf). The ReplicaSet controller releases a Pod the same way
// when the Pod stops matching its selector, though on a scale-down it
// deletes the Pods it controls whatever other owners they have; here the
// garbage collector's rule wins. Released, it is simply the other
// owner's ConfigMap: no longer selected as a child nor enqueued by its
// events, so not counted (the count the parent's status shows is the
// number it wants), and never touched again. What becomes of it once its
// other owners go is theirs (a garbage collector's), not ours
// (TestScalingDownReleasesAChildASecondLiveOwnerAlsoOwnsAndDeletesTheRest,
// TestAReleasedChildIsNoLongerInOurViewAndIsNeverTouchedAgain).
func (c *controller) deleteOrRelease(ctx context.Context, owner informer.Key, child *corev1.ConfigMap) error {
	ours := metav1.GetControllerOf(child)
	if !c.anotherOwnerHas(child, ours) {
		return c.delete(ctx, owner, child)
	}
	released := child.DeepCopy() // pitfall 2: never modify the cache's copy
	released.OwnerReferences = slices.DeleteFunc(released.OwnerReferences, func(ref metav1.OwnerReference) bool { return ref.UID == ours.UID })
	delete(released.Labels, roleLabel) // our labels too: it is no longer ours in any way
	delete(released.Labels, parentLabel)
	c.log.say("  %-12s child %s has another owner: releasing it (our owner reference and labels dropped), not deleting it", owner.Name, child.Name)
	return c.update(ctx, owner, released)
}

// create creates a child of parent, as a write of owner's reconcile: the
// guard records the child the API server answered with (its generated
// name and its resourceVersion), so owner waits for it to reach the cache.
func (c *controller) create(ctx context.Context, owner informer.Key, parent *corev1.ConfigMap, value string) error {
	child := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			// A generated name: two creates are two children. That is why
			// reading our own writes matters here.
			GenerateName: parent.Name + "-",
			Labels:       map[string]string{roleLabel: "child", parentLabel: parent.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(parent,
				corev1.SchemeGroupVersion.WithKind("ConfigMap"))},
		},
		Data: map[string]string{"value": value},
	}
	c.stats.creates.Add(1)
	return c.writes.Write(ctx, owner, c.client.Post().Namespace(parent.Namespace).Resource("configmaps").Body(child), child)
}

// update sends obj with the resourceVersion the cache had. If someone
// changed the object since, the server answers 409 Conflict: our view was
// stale, so we requeue and decide again from the newer state.
func (c *controller) update(ctx context.Context, owner informer.Key, obj *corev1.ConfigMap) error {
	c.stats.updates.Add(1)
	err := c.writes.Write(ctx, owner, c.client.Put().Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(obj), obj)
	if apierrors.IsConflict(err) {
		c.stats.conflicts.Add(1)
		c.log.say("  %-12s 409 Conflict on %s: the cache was behind the server; requeue and look again", owner.Name, obj.Name)
	}
	return err
}

// delete deletes a child, as a write of owner's reconcile: that object,
// by its UID, never a newer one made under its name since.
func (c *controller) delete(ctx context.Context, owner informer.Key, obj *corev1.ConfigMap) error {
	c.stats.deletes.Add(1)
	that := &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(obj.UID))}
	err := c.writes.Delete(ctx, owner, informer.KeyFor(obj), c.client.Delete().Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(that))
	if apierrors.IsNotFound(err) {
		return nil // someone beat us to it: fine, that is the state we want
	}
	return err
}

func plural(n int) string {
	if n == 1 {
		return "1 child"
	}
	return strconv.Itoa(n) + " children"
}
