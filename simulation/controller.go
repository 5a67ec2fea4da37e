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
// second create can only answer AlreadyExists.
func ChildName(parent, ring string) string { return parent + "-" + ring }

// controller is the simulated replicas' reconcile, chaos/replicas'
// one: read the parent from the cache, work a moment, then bring the
// parent's and its child's ReconciledBy annotation to
// "<member>/<tick>", creating the child if the cache lacks it. Every
// write is guarded by the resourceVersion the cache held.
type controller struct {
	w              *world
	r              *replica
	ring, member   string
	cms            *si.Informer[*corev1.ConfigMap]
	client         *rest.RESTClient
	writeTimeout   time.Duration
	work           time.Duration
	recordOverlaps bool
}

func (c *controller) reconcile(ctx context.Context, key informer.Key) (workqueue.Result, error) {
	if !c.r.link.gate.wait(ctx) {
		return workqueue.Result{}, nil
	}
	c.w.hist.add(Event{What: Begin, Replica: c.r.name, Ring: c.ring, Member: c.member, Key: key.String()})
	defer c.w.hist.add(Event{What: End, Replica: c.r.name, Ring: c.ring, Member: c.member, Key: key.String()})
	parent, err := c.cms.Lister().Namespace(key.Namespace).Get(key.Name)
	if err != nil {
		return workqueue.Result{}, nil
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
		errs = append(errs, c.annotate(wctx, parent, want))
	}
	child, err := c.cms.Lister().Namespace(key.Namespace).Get(ChildName(key.Name, c.ring))
	switch {
	case apierrors.IsNotFound(err):
		errs = append(errs, c.create(wctx, parent, want))
	case err != nil:
		errs = append(errs, err)
	case child.Annotations[ReconciledBy(c.ring)] != want:
		errs = append(errs, c.annotate(wctx, child, want))
	}
	if errors.Join(errs...) != nil {
		return workqueue.Result{RequeueAfter: time.Second}, nil
	}
	return workqueue.Result{}, nil
}

// annotate sets obj's annotation, guarded by the resourceVersion read.
// A conflict is no error: the change's event brings the key back.
func (c *controller) annotate(ctx context.Context, obj *corev1.ConfigMap, want string) error {
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, obj.ResourceVersion, ReconciledBy(c.ring), want)
	err := c.client.Patch(types.MergePatchType).Namespace(obj.Namespace).Resource("configmaps").Name(obj.Name).Body(patch).Do(ctx).Error()
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// create makes parent's child for this ring, owned by parent.
func (c *controller) create(ctx context.Context, parent *corev1.ConfigMap, want string) error {
	yes := true
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: ChildName(parent.Name, c.ring), Namespace: parent.Namespace,
		Labels:      map[string]string{"app": "sim"},
		Annotations: map[string]string{ReconciledBy(c.ring): want},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.Name, UID: parent.UID,
			Controller: &yes}},
	}}
	err := c.client.Post().Namespace(parent.Namespace).Resource("configmaps").Body(child).Do(ctx).Error()
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
