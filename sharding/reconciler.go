package sharding

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
//   - does nothing for the object if it is not in the cache: absence
//     means "not this member's" (it moved, or was never here), never
//     "deleted" — a relabel reaches the old owner's informer as a delete;
//   - does nothing for it if it is labelled for another member;
//   - acknowledges its drain: removes the shard and drain labels, guarded
//     by the resourceVersion it read, so the sharder can give the object
//     to its new owner (a 404 means the object is gone: deleted, or with
//     its CRD, whose path the server no longer serves,
//     TestAnAcknowledgementAfterItsCRDWasDeletedIsNoFailure; the same 404
//     answers a resource misnamed here, so spell resource as the server
//     does) — unless the drain is stale, naming another controller than
//     the object has now (adopted or orphaned since: see drainvalue.go),
//     which it leaves for the sharder to drain anew;
//   - otherwise calls reconcile;
//   - and, last (after reconcile, which may touch them, even if it
//     panics), acknowledges the drains of the objects in the cache whose
//     ring key is this key, their controller owner not being in the
//     cache (see below).
//
// The last step's failures (a PATCH refused or timed out) are returned
// together with the key's own outcome, marked workqueue.KeepRetrying, so
// the key is retried (even if its own outcome is Terminal, or a panic,
// or the queue's MaxRetries is spent) and no object waits on another's
// refusal.
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
// when that owner is not in the cache — not sharded, or deleted. The
// drained children of an object the member lets go follow it at once,
// in the same call, whatever its key, and never go before it; a drained
// child of a parent this member keeps stays with it: the sharder takes
// its drain back, or, if the parent is deleted first, the call its
// delete brings lets the child go (keptChildren). Either
// way of keying lets every drained object of this lister's resource go;
// key an object one way, so that no reconcile of it under the other key
// runs while its drain is acknowledged. Objects of another resource
// (what EnqueueOwner maps to their owner's key) are not in this lister:
// their resource needs a Reconciler of its own, given their own keys.
func Reconciler[T informer.Object](shard Shard, objects *lister.Lister[T], client *rest.RESTClient, resource string, reconcile workqueue.ReconcileFunc[informer.Key]) workqueue.ReconcileFunc[informer.Key] {
	var busy inFlight
	get := func(key informer.Key) (T, error) {
		if key.Namespace == "" {
			return objects.Get(key.Name)
		}
		return objects.Namespace(key.Namespace).Get(key.Name)
	}
	mine := labels.SelectorFromSet(labels.Set{shard.Label(): shard.Member})
	acks := acker{shard: shard, client: client, resource: resource, busy: &busy, owed: &owedChildren{}, kept: &keptChildren{}, cached: func(key informer.Key) (metav1.Object, bool) {
		obj, err := get(key)
		return obj, err == nil
	}, mine: func(namespace string) []metav1.Object {
		var found []T
		if namespace == "" {
			found = objects.List(mine)
		} else {
			found = objects.Namespace(namespace).List(mine)
		}
		out := make([]metav1.Object, len(found))
		for i, obj := range found {
			out[i] = obj
		}
		return out
	}}
	// letGo acknowledges the drains under key of objects other than
	// key's own, and the children owed (owedChildren) or kept
	// (keptChildren) under it; letGoOwn, that of the object at key.
	letGo := func(ctx context.Context, drained []T, c *call) error {
		return errors.Join(acknowledgeAll(ctx, acks, c, drained, acks.stillUnder(c.key)), acks.payOwed(ctx, c), acks.payKept(ctx, c))
	}
	letGoOwn := func(ctx context.Context, obj T, c *call) error {
		return acknowledgeAll(ctx, acks, c, []T{obj}, func(metav1.Object) bool { return true })
	}
	return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		c, leave := busy.enter(key)
		defer leave()
		obj, err := get(key)
		if apierrors.IsNotFound(err) { // not ours (any more): see the pitfall above
			drained, _ := drainsUnder(shard, objects, key, nil, &busy, c)
			busy.reconciled(c)
			return workqueue.Result{}, letGo(ctx, drained, c)
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
		drained, left := drainsUnder(shard, objects, key, obj, &busy, c)
		acks.keepChildren(obj, left)
		labels := obj.GetLabels()
		switch {
		case labels[shard.Label()] != shard.Member:
			busy.reconciled(c)
			return workqueue.Result{}, letGo(ctx, drained, c)
		case labels[shard.DrainLabel()] != "":
			busy.reconciled(c)
			return workqueue.Result{}, errors.Join(letGo(ctx, drained, c), letGoOwn(ctx, obj, c))
		}
		// The others are let go after the reconcile, which may touch them
		// (a member that keys by ring key reconciles them under key), even
		// if it panics.
		res, err := reconcileRecovered(ctx, key, reconcile, len(drained) > 0 || acks.owed.under(key) || acks.kept.any())
		busy.reconciled(c)
		return res, withOthers(letGo(ctx, drained, c), err)
	}
}

// reconcileRecovered calls reconcile and, if recovering is set (other
// drains, or owed children, wait under key:
// TestAnOwedChildIsStillLetGoWhenTheOwingKeysReconcilePanics), turns a
// panic into the *workqueue.PanicError Run would have made of it, so that
// the caller still lets the other objects under key go.
func reconcileRecovered(ctx context.Context, key informer.Key, reconcile workqueue.ReconcileFunc[informer.Key], recovering bool) (res workqueue.Result, err error) {
	if recovering {
		defer func() {
			if v := recover(); v != nil {
				res, err = workqueue.Result{}, workqueue.NewPanicError(v)
			}
		}()
	}
	return reconcile(ctx, key)
}

// withOthers joins the key's own outcome to the failures of the other
// objects' acknowledgements under it. While one of those failed, the key
// must come back: an own outcome marked Terminal loses the mark (its
// text stays), and the whole is marked KeepRetrying, or the queue would
// give the key up (Terminal, MaxRetries) and the other object would stay
// draining here with nothing to bring its key back. Its reconcile, run
// again, says Terminal again once the others are through.
func withOthers(others, own error) error {
	if others == nil {
		return own
	}
	if p, ok := own.(*workqueue.PanicError); ok && p != nil && terminalOrUnreadable(own) { // a typed nil one is unmarked below
		bare := *p // a panic still, its value's mark hidden
		bare.Err = nil
		own = &bare
	} else if terminalOrUnreadable(own) {
		own = unmarked{own, barePanicIn(own)}
	}
	return workqueue.KeepRetrying(errors.Join(others, own))
}

// terminalOrUnreadable reports whether err is marked Terminal, or panics
// when its marks are looked for (a typed nil whose Unwrap dereferences
// it: TestATypedNilWhoseUnwrapPanicsStillRetriesAnotherObjectsFailedAcknowledgement,
// TestAReconcileThatPanicsWithATypedNilStillRetriesAnotherObjectsFailedAcknowledgement).
func terminalOrUnreadable(err error) (yes bool) {
	defer func() {
		if recover() != nil {
			yes = true
		}
	}()
	_, yes = errors.AsType[*workqueue.TerminalError](err)
	return yes
}

// unmarked is an error's text without its marks (it wraps nothing but
// the *workqueue.PanicError the error held, bare, so errors.As finds no
// Terminal in it, and a panic the reconcile recovered and returned marked
// Terminal still reaches OnError as one:
// TestAReturnedTerminalPanicUnderAKeyWithAFailedDrainReachesOnErrorAsAPanicError).
// Its text is read only when asked
// for: an error that panics when read (a typed nil in Terminal) then
// panics where workqueue.Run can take it for what it is, not in the
// reconcile
// (TestATerminalTypedNilReconcileStillRetriesAnotherObjectsFailedAcknowledgement).
type unmarked struct {
	err   error
	panic *workqueue.PanicError // nil if err holds none
}

func (u unmarked) Error() string { return u.err.Error() }

// Unwrap returns the panic err held, without its value's marks, or nil.
func (u unmarked) Unwrap() error {
	if u.panic == nil {
		return nil
	}
	return u.panic
}

// barePanicIn returns a copy of the *workqueue.PanicError in err, its
// value's marks hidden (Err nil), or nil if there is none or looking for
// it panics (a typed nil whose Unwrap dereferences it).
func barePanicIn(err error) (bare *workqueue.PanicError) {
	defer func() {
		if recover() != nil {
			bare = nil
		}
	}()
	p, ok := errors.AsType[*workqueue.PanicError](err)
	if !ok || p == nil {
		return nil
	}
	c := *p
	c.Err = nil
	return &c
}

// drainsUnder returns the drains this call of key lets go of besides
// key's own object: this member's drained objects whose ring key is key,
// but for the object at key itself (by its key: a ConfigMap "web"
// controlled by Deployment "web" is acknowledged once:
// TestADrainedObjectWhoseControllerHasItsNameIsAcknowledgedOncePerCall,
// TestADrainedObjectAtItsRingKeyWithoutAUIDIsAcknowledgedOncePerCall)
// and its children (their controller is atKey, the cached object at key,
// nil if none): those follow their parent, let go once it is
// (acker.letGoChildren), or stay with it (left: its drained ones). For a member that keys by ring
// key, key is the one it holds for them. It also records in c every
// object of this member whose ring key is key: what a reconcile of key
// may touch. Its cost is one pass over the member's cached objects of
// key's namespace, matching a selector.
func drainsUnder[T informer.Object](shard Shard, objects *lister.Lister[T], key informer.Key, atKey metav1.Object, busy *inFlight, c *call) (drained []T, left []metav1.Object) {
	mine := labels.SelectorFromSet(labels.Set{shard.Label(): shard.Member})
	var found []T
	if key.Namespace == "" {
		found = objects.List(mine)
	} else {
		found = objects.Namespace(key.Namespace).List(mine)
	}
	for _, obj := range found {
		if ringKeyOf(obj) != key {
			continue
		}
		busy.hold(c, obj)
		if informer.KeyFor(obj) == key {
			continue // the object at key, whose ring key is key (it has its owner's name): its own drain is the call's
		}
		ref := metav1.GetControllerOf(obj)
		switch {
		case ref == nil || obj.GetLabels()[shard.DrainLabel()] == "":
		case atKey == nil || ref.UID != atKey.GetUID():
			drained = append(drained, obj)
		default:
			left = append(left, obj)
		}
	}
	return drained, left
}
