package simulation

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/readyourwrites"
	si "github.com/listwatch/informer/sharedinformer"
	"github.com/listwatch/informer/workqueue"
)

// AppLabel marks every object of a run, parents and children.
const AppLabel = "app=sim"

// ReconciledBy is the annotation a ring's reconcile keeps at
// "<member>/<tick>": who reconciled the object last, and which version
// of its data it saw.
func ReconciledBy(ring string) string { return "sim.listwatch.dev/reconciled-by-" + ring }

// ChildName is parent's child in ring: one per parent and ring, so a
// second create can only answer AlreadyExists (create).
func ChildName(parent, ring string) string { return parent + "-" + ring }

// controller is the simulated replicas' reconcile, chaos/replicas'
// one: read the parent from the cache, work a moment, then bring the
// parent's and its child's ReconciledBy annotation to
// "<member>/<tick>", creating the child if the cache lacks it. Every
// write is guarded by the resourceVersion the cache held, and goes
// through a read-your-writes guard (written, the Cache that records
// it), whose setup is numbered setup: the history records what each
// reconcile read and wrote, for "read your writes".
type controller struct {
	w              *world
	r              *replica
	ring, member   string
	setup          uint64
	cms            *si.Informer[*corev1.ConfigMap]
	written        *readyourwrites.Cache[*corev1.ConfigMap]
	client         *rest.RESTClient
	writeTimeout   time.Duration
	work           time.Duration
	recordOverlaps bool
}

func (c *controller) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	if !c.r.link.gate.wait(ctx) {
		return workqueue.Result{}, nil
	}
	c.note(Begin, key, "", nil)
	defer c.note(End, key, "", nil)
	if parent, ring, ok := childOf(key.Name); ok { // an orphan's own key (grouped seeds)
		return c.adopt(ctx, key, parent, ring)
	}
	parent, err := c.cms.Lister().Namespace(key.Namespace).Get(key.Name)
	c.note(Read, key, key.Name, parent)
	if err != nil {
		return c.removeChild(ctx, key)
	}
	select { // the work between the read and the writes: the window a pause can fall into
	case <-ctx.Done():
		return workqueue.Result{}, nil
	case <-time.After(c.work):
	}
	c.r.link.gate.wait(context.WithoutCancel(ctx)) // a paused process resumes where it stopped
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.writeTimeout)
	defer cancel()
	want := c.member + "/" + parent.Data["tick"]
	var errs []error
	if parent.Annotations[ReconciledBy(c.ring)] != want {
		errs = append(errs, c.annotate(wctx, key, parent, want))
	}
	childName := ChildName(key.Name, c.ring)
	child, err := c.cms.Lister().Namespace(key.Namespace).Get(childName)
	c.note(Read, key, childName, child)
	switch {
	case apierrors.IsNotFound(err):
		errs = append(errs, c.create(wctx, key, parent, want))
	case err != nil:
		errs = append(errs, err)
	case controlledBy(child, key.Name) && metav1.GetControllerOfNoCopy(child).UID != parent.UID:
		// The child of a parent of this name deleted before: it outlives
		// its parent, and holds this parent's child's name. Delete it, as
		// removeChild does, and create this one's on the next look.
		if err := c.deleteChild(wctx, key, child); err != nil {
			errs = append(errs, err)
		}
		return workqueue.Result{RequeueAfter: time.Second}, nil
	case child.Annotations[ReconciledBy(c.ring)] != want:
		errs = append(errs, c.annotate(wctx, key, child, want))
	}
	if errors.Join(errs...) != nil {
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	return workqueue.Result{}, nil
}

// removeChild deletes the ring's child of parent key, which is gone, if
// the cache holds one it controls: as a controller cleans up without a
// garbage collector (the writers leave it one delete in two), guarded by
// the child's UID and recorded in the guard, so that the key's next
// reconcile does not read the child it deleted ("read your writes").
// In the seeds whose world says so, the delete is recorded as one
// of unknown UID (Cache.Deleted with ""), as a controller whose DELETE
// answer could not be decoded records it.
func (c *controller) removeChild(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	name := ChildName(key.Name, c.ring)
	child, err := c.cms.Lister().Namespace(key.Namespace).Get(name)
	c.note(Read, key, name, child)
	if err != nil || !controlledBy(child, key.Name) {
		return workqueue.Result{}, nil
	}
	c.r.link.gate.wait(context.WithoutCancel(ctx))
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.writeTimeout)
	defer cancel()
	if c.deleteChild(wctx, key, child) != nil {
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	return workqueue.Result{}, nil
}

// deleteChild deletes child, a child the reconcile of key found, guarded
// by its UID, and records the delete in the guard and the history; an
// error is one to look again after (a child gone already, or another
// object of its name now, is none).
func (c *controller) deleteChild(ctx context.Context, key informer.Key, child *corev1.ConfigMap) error {
	name := child.Name
	uid := child.UID
	var err error
	req := c.client.Delete().Namespace(key.Namespace).Resource("configmaps").Name(name).
		Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	childKey := informer.Key{Namespace: key.Namespace, Name: name}
	if c.w.unknownUIDDeletes {
		err = req.Do(ctx).Error()
		if err == nil {
			// The child is deleted whether or not this records it: Deleted
			// fails only for a Cache tracked after its guard closed, and a
			// read it then fails to hold is the checker's to catch.
			_ = c.written.Deleted(key, childKey, "", nil)
		}
	} else {
		err = c.written.Delete(ctx, key, childKey, req)
	}
	switch {
	case err == nil:
		c.w.hist.add(Event{What: Removed, Replica: c.r.name, Ring: c.ring, Member: c.member, Key: key.String(), Setup: c.setup, Object: name, UID: string(uid)})
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// gone already, or another object of that name now
	default:
		return err
	}
	return nil
}

// controlledBy reports whether obj's controller is the ConfigMap parent.
func controlledBy(obj *corev1.ConfigMap, parent string) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.Kind == "ConfigMap" && ref.Name == parent
}

// note records an event of a reconcile of key in the history. For a
// Read, obj is what the cache held of the object named (nil: none), and
// the event takes the resourceVersion the informer had applied; for a
// Wrote, obj is the API server's answer.
func (c *controller) note(what string, key informer.Key, name string, obj *corev1.ConfigMap) {
	e := Event{What: what, Replica: c.r.name, Ring: c.ring, Member: c.member, Key: key.String(), Setup: c.setup, Object: name}
	if obj != nil {
		e.Version, e.UID = obj.ResourceVersion, string(obj.UID)
	}
	if what == Read {
		e.Applied = c.cms.LastSyncResourceVersion()
	}
	c.w.hist.add(e)
}

// annotate sets obj's annotation, guarded by the resourceVersion read,
// and records the write under owner. A conflict is no error: the
// change's event brings the key back.
func (c *controller) annotate(ctx context.Context, owner informer.Key, obj *corev1.ConfigMap, want string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, obj.ResourceVersion, ReconciledBy(c.ring), want)
	req := c.client.Patch(types.MergePatchType).Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(patch)
	err := c.write(ctx, owner, req)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// create makes parent's child for this ring, owned by parent, and
// records the write under owner. AlreadyExists is a failure, and the
// key is looked at again a second later: the child this member's cache
// lacks may be on its way here, or be a child of a parent of that name
// deleted before (its UID another), which a garbage collector deletes
// only a moment later, and whose delete event reaches the member that
// held it, not this one. Taking AlreadyExists for done left a parent
// made anew without its child for ever (sharded seed 1568, once
// deleted parents' children were collected late).
func (c *controller) create(ctx context.Context, owner informer.Key, parent *corev1.ConfigMap, want string) error {
	yes := true
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: ChildName(parent.Name, c.ring), Namespace: parent.Namespace,
		Labels:      map[string]string{"app": "sim"},
		Annotations: map[string]string{ReconciledBy(c.ring): want},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID,
			Controller: &yes}},
	}}
	return c.write(ctx, owner, c.client.Post().Namespace(parent.Namespace).Resource("configmaps").Body(child))
}

// write sends req through the read-your-writes guard's Cache, which
// holds owner's next reconcile until the informer shows the answer, and
// notes the answer in the history.
func (c *controller) write(ctx context.Context, owner informer.Key, req *rest.Request) error {
	out := &corev1.ConfigMap{}
	err := c.written.Write(ctx, owner, req, out)
	if err == nil {
		c.note(Wrote, owner, out.Name, out)
	}
	return err
}
