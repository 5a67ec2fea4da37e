package simulation

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/informer/fakeapiserver"
)

// collectGarbage is kube-controller-manager's garbage collector, as far
// as the simulator models it (Options.GarbageCollector): each second,
// until ctx ends, an object of the run's namespace whose every owner is
// gone (no object has its owner's uid) is deleted, as the admin, guarded
// by its uid. Without it, the writers delete the built-in controller's
// children with their parent, and an orphan a late create leaves behind
// stays, for the sharder's orphan path (see write).
func (w *world) collectGarbage(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		uids := map[types.UID]bool{}
		var objects []ownedObject
		for _, res := range fakeapiserver.BuiltIns() {
			if !res.Namespaced {
				continue
			}
			for _, u := range w.srv.Objects(res.GroupVersionResource) {
				if u.GetNamespace() != Namespace {
					continue
				}
				uids[u.GetUID()] = true
				if owners := u.GetOwnerReferences(); len(owners) > 0 {
					objects = append(objects, ownedObject{res.Resource, u.GetName(), u.GetUID(), owners})
				}
			}
		}
		for _, o := range objects {
			if o.orphaned(uids) {
				uid := o.uid
				_ = w.core.Delete().Namespace(Namespace).Resource(o.resource).Name(o.name).
					Body(&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}).Do(ctx).Error()
			}
		}
	}
}

// ownedObject is an object with owners, as the collector sees it.
type ownedObject struct {
	resource, name string
	uid            types.UID
	owners         []metav1.OwnerReference
}

// orphaned reports whether none of o's owners exists.
func (o ownedObject) orphaned(uids map[types.UID]bool) bool {
	for _, ref := range o.owners {
		if uids[ref.UID] {
			return false
		}
	}
	return true
}
