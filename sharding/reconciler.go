package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/lister"
	"github.com/listwatch/informer/workqueue"
)

// Reconciler wraps reconcile for a member of a sharded controller. Give
// it the lister of the member's shard-scoped informer (WithLabels with
// shard.Selector()), and a client and resource name to write labels with
// (Factory.RESTClient(gv), "configmaps"). For each key it:
//
//   - acknowledges the drains of the objects in the cache whose ring key
//     is this key, their controller owner not being in the cache (see
//     below);
//   - does nothing if the object is not in the cache: absence means "not
//     this member's" (it moved, or was never here), never "deleted" — a
//     relabel reaches the old owner's informer as a delete;
//   - does nothing if the object is labelled for another member;
//   - acknowledges a drain: removes the shard and drain labels, guarded
//     by the resourceVersion it read, so the sharder can give the object
//     to its new owner;
//   - otherwise calls reconcile.
//
// The first step's failures (a PATCH refused or timed out) do not skip
// the others: they are returned together with the key's own outcome, so
// the key is retried (even if its own outcome is Terminal) and no object
// waits on another's refusal.
//
// The acknowledgement runs in the worker that holds the key, so no
// reconcile of that key is running in this member when it is written:
// the workqueue never gives one key to two workers. Nor is one of
// another key that may hold the object: a drain waits for the calls of
// this Reconciler that may be reconciling it (inFlight).
//
// Every object leaves a live member by a drain (the children of a sharded
// parent when their parent moves). A drain is acknowledged
// under a key the member holds for the object: its own key (EnqueueKey),
// or its ring key, its controller owner's (EnqueueMapped with RingKey),
// when that owner is not in the cache — not sharded, or deleted. Either
// way of keying lets every drained object of this lister's resource go;
// key an object one way, so that no reconcile of it under the other key
// runs while its drain is acknowledged. Objects of another resource
// (what EnqueueOwner maps to their owner's key) are not in this lister:
// their resource needs a Reconciler of its own, given their own keys.
func Reconciler[T informer.Object](shard Shard, objects *lister.Lister[T], client *rest.RESTClient, resource string, reconcile workqueue.ReconcileFunc[informer.Key]) workqueue.ReconcileFunc[informer.Key] {
	var busy inFlight
	return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		c, leave := busy.enter(key)
		defer leave()
		var obj T
		var err error
		if key.Namespace == "" {
			obj, err = objects.Get(key.Name)
		} else {
			obj, err = objects.Namespace(key.Namespace).Get(key.Name)
		}
		if apierrors.IsNotFound(err) { // not ours (any more): see the pitfall above
			deferred, err := acknowledgeByRingKey(ctx, shard, objects, client, resource, key, "", &busy, c)
			return comeBack(workqueue.Result{}, deferred), err
		}
		if err != nil {
			return workqueue.Result{}, err
		}
		busy.hold(c, obj)
		// An object that merely has the name of another's owner (ConfigMap
		// "web", beside Deployment "web") does not hide that other's drain.
		// Nor does that other's failed acknowledgement (a webhook that
		// refuses it) keep this object from its turn: the failure is
		// returned with this object's outcome, and the key retried.
		deferred, others := acknowledgeByRingKey(ctx, shard, objects, client, resource, key, obj.GetUID(), &busy, c)
		labels := obj.GetLabels()
		switch {
		case labels[shard.Label()] != shard.Member:
			return comeBack(workqueue.Result{}, deferred), others
		case labels[shard.DrainLabel()] != "" && busy.heldElsewhere(c, obj):
			return comeBack(workqueue.Result{}, true), others
		case labels[shard.DrainLabel()] != "":
			return comeBack(workqueue.Result{}, deferred), errors.Join(others, acknowledge(ctx, client, resource, key, obj.GetResourceVersion(), shard))
		}
		res, err := reconcile(ctx, key)
		return comeBack(res, deferred), withOthers(others, deferred, err)
	}
}

// busyRetry is how soon a key comes back whose acknowledgement waited
// for a reconcile of another key in this member.
const busyRetry = 100 * time.Millisecond

// comeBack is res, brought back within busyRetry if an acknowledgement
// was deferred: the reconcile it waited for may be the last event of its
// key (TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo).
func comeBack(res workqueue.Result, deferred bool) workqueue.Result {
	if deferred && (res.RequeueAfter <= 0 || res.RequeueAfter > busyRetry) {
		res.RequeueAfter = busyRetry
	}
	return res
}

// withOthers joins the key's own outcome to the failures of the other
// objects' acknowledgements under it. While one of those failed, or one
// was deferred, the key must come back: an own outcome marked Terminal
// loses the mark (its text stays), and the whole is marked KeepRetrying,
// or the queue would give the key up (Terminal, MaxRetries) and the other
// object would stay draining here with nothing to bring its key back. Its
// reconcile, run again, says Terminal again once the others are through.
func withOthers(others error, deferred bool, own error) error {
	if others == nil && !deferred {
		return own
	}
	if _, terminal := errors.AsType[*workqueue.TerminalError](own); terminal {
		own = errors.New(own.Error())
	}
	return workqueue.KeepRetrying(errors.Join(others, own))
}

// acknowledgeByRingKey acknowledges the drains of this member's objects
// whose ring key is key and whose controller owner is not the cached
// object at key (uid; "" if there is none): for a member that keys by
// ring key, key is the one it holds for them. It also records in c every
// object of this member whose ring key is key: what a reconcile of key
// may touch. Its cost is one pass over the member's cached objects of
// key's namespace, matching a selector.
//
// A drain another call of this Reconciler may still be reconciling
// (busy.heldElsewhere) is left alone, and deferred says so: key comes
// back soon and looks again, since the drain label's event may have
// brought only key
// (TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo).
func acknowledgeByRingKey[T informer.Object](ctx context.Context, shard Shard, objects *lister.Lister[T], client *rest.RESTClient, resource string, key informer.Key, uid types.UID, busy *inFlight, c *call) (deferred bool, err error) {
	mine := labels.SelectorFromSet(labels.Set{shard.Label(): shard.Member})
	var found []T
	if key.Namespace == "" {
		found = objects.List(mine)
	} else {
		found = objects.Namespace(key.Namespace).List(mine)
	}
	var drained []T
	for _, obj := range found {
		if ringKeyOf(obj) != key {
			continue
		}
		busy.hold(c, obj)
		if ref := metav1.GetControllerOf(obj); ref != nil && ref.UID != uid && obj.GetLabels()[shard.DrainLabel()] != "" {
			drained = append(drained, obj)
		}
	}
	var errs []error
	for _, obj := range drained {
		if busy.heldElsewhere(c, obj) {
			deferred = true
			continue
		}
		errs = append(errs, acknowledge(ctx, client, resource, informer.KeyFor(obj), obj.GetResourceVersion(), shard))
	}
	return deferred, errors.Join(errs...)
}

// acknowledge lets go of a drained object: one merge PATCH that removes
// both labels if the object is still at resourceVersion rv. A 409 means
// it changed since this member's cache saw it: the change is on its way
// to the cache, and its event brings the key back for another look. The
// PATCH gives up after shard's RequestTimeout on shard's Clock, an
// error: the key is retried, marked KeepRetrying, since no later event
// may bring it back and a queue's MaxRetries would leave the object
// drained for ever
// (TestADrainWhoseAcknowledgementFailedBrieflyIsLetGoUnderACappedRetryQueue).
func acknowledge(ctx context.Context, client *rest.RESTClient, resource string, key informer.Key, rv string, shard Shard) error {
	patch, err := labelPatch(rv, map[string]*string{shard.Label(): nil, shard.DrainLabel(): nil})
	if err != nil {
		return err
	}
	ctx, cancel := informer.WithTimeout(ctx, shard.Clock, shard.requestTimeout())
	defer cancel()
	err = client.Patch(types.MergePatchType).NamespaceIfScoped(key.Namespace, key.Namespace != "").
		Resource(resource).Name(key.Name).Body(patch).Do(ctx).Error()
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // deleted meanwhile, or changed: see above
	}
	if err != nil {
		return workqueue.KeepRetrying(fmt.Errorf("sharding: acknowledging the drain of %s: %w", key, err))
	}
	return nil
}

// labelPatch is a JSON merge patch that sets (or, for nil, removes)
// labels, and fails with 409 Conflict unless the object is at
// resourceVersion rv.
func labelPatch(rv string, labels map[string]*string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv, "labels": labels}})
}
