package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
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
//   - does nothing for the object if it is not in the cache: absence
//     means "not this member's" (it moved, or was never here), never
//     "deleted" — a relabel reaches the old owner's informer as a delete;
//   - does nothing for it if it is labelled for another member;
//   - acknowledges its drain: removes the shard and drain labels, guarded
//     by the resourceVersion it read, so the sharder can give the object
//     to its new owner;
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
// its drain back. Either
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
	acks := acker{shard: shard, client: client, resource: resource, busy: &busy, owed: &owedChildren{}, cached: func(key informer.Key) (metav1.Object, bool) {
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
	// key's own, and the children owed under it (owedChildren); letGoOwn,
	// that of the object at key.
	letGo := func(ctx context.Context, drained []T, c *call) error {
		return errors.Join(acknowledgeAll(ctx, acks, c, drained, acks.stillUnder(c.key)), acks.payOwed(ctx, c))
	}
	letGoOwn := func(ctx context.Context, obj T, c *call) error {
		return acknowledgeAll(ctx, acks, c, []T{obj}, func(metav1.Object) bool { return true })
	}
	return func(ctx context.Context, key informer.Key) (workqueue.Result, error) {
		c, leave := busy.enter(key)
		defer leave()
		obj, err := get(key)
		if apierrors.IsNotFound(err) { // not ours (any more): see the pitfall above
			drained := drainsUnder(shard, objects, key, nil, &busy, c)
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
		drained := drainsUnder(shard, objects, key, obj, &busy, c)
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
		res, err := reconcileRecovered(ctx, key, reconcile, len(drained) > 0 || acks.owed.under(key))
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
	if p, ok := own.(*workqueue.PanicError); ok && terminalOrUnreadable(own) {
		bare := *p // a panic still, its value's mark hidden
		bare.Err = nil
		own = &bare
	} else if terminalOrUnreadable(own) {
		own = unmarked{own}
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

// unmarked is an error's text without its marks (it wraps nothing, so
// errors.As finds no Terminal in it). Its text is read only when asked
// for: an error that panics when read (a typed nil in Terminal) then
// panics where workqueue.Run can take it for what it is, not in the
// reconcile
// (TestATerminalTypedNilReconcileStillRetriesAnotherObjectsFailedAcknowledgement).
type unmarked struct{ err error }

func (u unmarked) Error() string { return u.err.Error() }

// drainsUnder returns the drains this call of key lets go of besides
// key's own object: this member's drained objects whose ring key is key,
// but for the object at key itself (by its key: a ConfigMap "web"
// controlled by Deployment "web" is acknowledged once:
// TestADrainedObjectWhoseControllerHasItsNameIsAcknowledgedOncePerCall,
// TestADrainedObjectAtItsRingKeyWithoutAUIDIsAcknowledgedOncePerCall)
// and its children (their controller is atKey, the cached object at key,
// nil if none): those follow their parent, let go once it is
// (acker.letGoChildren), or stay with it. For a member that keys by ring
// key, key is the one it holds for them. It also records in c every
// object of this member whose ring key is key: what a reconcile of key
// may touch. Its cost is one pass over the member's cached objects of
// key's namespace, matching a selector.
func drainsUnder[T informer.Object](shard Shard, objects *lister.Lister[T], key informer.Key, atKey metav1.Object, busy *inFlight, c *call) []T {
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
		if informer.KeyFor(obj) == key {
			continue // the object at key, whose ring key is key (it has its owner's name): its own drain is the call's
		}
		ref := metav1.GetControllerOf(obj)
		if ref != nil && (atKey == nil || ref.UID != atKey.GetUID()) && obj.GetLabels()[shard.DrainLabel()] != "" {
			drained = append(drained, obj)
		}
	}
	return drained
}

// acknowledgeAll acknowledges each drained object once no other call of
// this Reconciler may be reconciling it (busy.waitFor): c has stopped
// reconciling, so it waits only for calls that do
// (TestAnAdoptedChildDrainedWhileItsOwnKeyIsReconciledUnderARingKeyIsLetGo).
func acknowledgeAll[T informer.Object](ctx context.Context, a acker, c *call, drained []T, still func(metav1.Object) bool) error {
	var errs []error
	c.cache.shard = a.shard // one budget for the call, however many 409s
	for _, obj := range drained {
		went, err := a.acknowledge(ctx, c, obj, still, nil)
		if went != nil {
			err = errors.Join(err, a.letGoChildren(ctx, c, went, letGone{}))
		}
		if ctx.Err() != nil {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// acker sends the acknowledgements of one Reconciler.
type acker struct {
	shard    Shard
	client   *rest.RESTClient
	resource string
	busy     *inFlight
	cached   func(informer.Key) (metav1.Object, bool) // the object the member's cache holds at a key
	mine     func(namespace string) []metav1.Object   // the member's cached objects in a namespace
	owed     *owedChildren
}

// owedChildren are children whose acknowledgement failed after their
// parent was let go, by the key of the call that let the parent go: that
// key comes back (the failure is KeepRetrying), but the parent has left
// the cache, so nothing else would find them under it
// (TestAChildWhoseAcknowledgementAfterItsParentFailedOnceIsStillLetGoUnderARingKey).
type owedChildren struct {
	mu sync.Mutex
	by map[informer.Key]map[informer.Key]letGone // call key -> child key -> its parent, as let go; guarded by mu
}

// letGone are the objects a call let go, by UID, each at the
// resourceVersion it went at: a cache behind still shows it there, and
// any other version of it is it back (waitsForParent).
type letGone map[types.UID]string

// owe records child, whose parent went as gone says, under key.
func (o *owedChildren) owe(key, child informer.Key, gone letGone) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[informer.Key]map[informer.Key]letGone{}
	}
	if o.by[key] == nil {
		o.by[key] = map[informer.Key]letGone{}
	}
	o.by[key][child] = gone
}

// under reports whether anything is owed under key.
func (o *owedChildren) under(key informer.Key) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.by[key]) > 0
}

// take returns and forgets what is owed under key.
func (o *owedChildren) take(key informer.Key) map[informer.Key]letGone {
	o.mu.Lock()
	defer o.mu.Unlock()
	owed := o.by[key]
	delete(o.by, key)
	return owed
}

// payOwed tries again the children owed under c's key that are still
// drained here and still children of the parent let go, once that parent
// is out of this member's cache: a parent back here and kept (the ring
// moved back) keeps its child, whose drain the sharder takes back
// (TestAnOwedChildIsNotLetGoOnceItsParentIsBackAndKeptOnTheMember); one
// the cache still shows draining leaves it owed, and the key retried.
func (a acker) payOwed(ctx context.Context, c *call) error {
	var errs []error
	for key, parentGone := range a.owed.take(c.key) {
		child, ok := a.cached(key)
		if !ok || child.GetLabels()[a.shard.Label()] != a.shard.Member || child.GetLabels()[a.shard.DrainLabel()] == "" {
			continue // moved or deleted since
		}
		ref := metav1.GetControllerOf(child)
		if ref == nil {
			continue // orphaned since: its own events bring its keys
		}
		if _, same := parentGone[ref.UID]; !same {
			continue // another's child now: its own events bring its keys
		}
		if parent, ok := a.cached(ringKeyOf(child)); ok && a.backHere(parent, ref.UID, parentGone) {
			if parent.GetLabels()[a.shard.DrainLabel()] == "" {
				continue // its parent is back here, kept: the sharder takes the child's drain back
			}
			a.owed.owe(c.key, key, parentGone) // its parent is back, draining anew: it goes after it
			errs = append(errs, workqueue.KeepRetrying(fmt.Errorf("sharding: the drain of %s waits for its parent, back on this member", key)))
			continue
		}
		errs = append(errs, a.letGoChild(ctx, c, child, parentGone))
	}
	return errors.Join(errs...)
}

// letGoChildren lets go, once their parent has been let go, the drained
// children of parent in this member's cache (their controller is parent,
// their ring key parent's key), and theirs in turn (visited guards
// against an owner cycle). A child drained while its parent was here (a
// Pod adopted while drained) waits for the parent: let go before, it
// would be missing from this member while the parent is reconciled
// here, should the parent's drain be taken back
// (TestAChildLetGoWithItsDrainingParentIsNotMissingWhenThatDrainIsTakenBackAndTheParentReconciled);
// let go only by a call of the parent's key, it would wait for ever for
// a member that keys by ring key, whose parent's events bring another
// key (TestAChildOfADrainingParentWhoseRingKeyIsAnothersIsLetGoUnderARingKey,
// TestAChildLeftWithAKeptParentIsLetGoOnceThatParentDrainsUnderAnotherRingKey).
func (a acker) letGoChildren(ctx context.Context, c *call, parent metav1.Object, visited letGone) error {
	visited[parent.GetUID()] = parent.GetResourceVersion()
	parentKey := informer.KeyFor(parent)
	var errs []error
	for _, child := range a.mine(parent.GetNamespace()) {
		ref := metav1.GetControllerOf(child)
		if _, seen := visited[child.GetUID()]; seen || ref == nil || ref.UID != parent.GetUID() || ringKeyOf(child) != parentKey || child.GetLabels()[a.shard.DrainLabel()] == "" {
			continue
		}
		if errs = append(errs, a.letGoChild(ctx, c, child, visited)); ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// letGoChild lets go one drained child whose parent (in visited) has
// been let go, then its own children; a failure is owed under c's key.
func (a acker) letGoChild(ctx context.Context, c *call, child metav1.Object, visited letGone) error {
	went, err := a.acknowledge(ctx, c, child, a.stillUnder(ringKeyOf(child)), visited)
	if err != nil {
		parent := metav1.GetControllerOf(child).UID
		a.owed.owe(c.key, informer.KeyFor(child), letGone{parent: visited[parent]})
	}
	if went != nil {
		err = errors.Join(err, a.letGoChildren(ctx, c, went, visited))
	}
	return err
}

// stillUnder reports whether an object, as the cache shows it now, is
// still one a call of key lets go besides key's own (drainsUnder's rule):
// its ring key is key. A child adopted meanwhile by another parent is not
// (TestARetryAfterA409DoesNotLetGoAChildAdoptedMeanwhileByAParentThisMemberReconciles).
func (a acker) stillUnder(key informer.Key) func(metav1.Object) bool {
	return func(now metav1.Object) bool {
		return metav1.GetControllerOf(now) != nil && ringKeyOf(now) == key && informer.KeyFor(now) != key
	}
}

// waitsForParent reports whether obj's controller owner is in this
// member's cache, labelled for it, and not among the parents this call
// has let go (gone): a parent still here. A drained child of it waits:
// if the parent is kept (the child was adopted while drained), it follows
// its parent here, and the sharder takes its drain back (decideChild)
// (TestARetryAfterA409UnderItsOwnKeyDoesNotLetGoAChildAdoptedMeanwhileByAParentThisMemberReconciles);
// if the parent is draining, the call that lets the parent go lets the
// child go right after it (letGoChildren), never before, under whatever
// key the child comes (TestAChildKeyedByItsOwnKeyIsNotLetGoBeforeItsDrainingParent).
func (a acker) waitsForParent(obj metav1.Object, gone letGone) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return false
	}
	parent, ok := a.cached(ringKeyOf(obj))
	return ok && a.backHere(parent, ref.UID, gone)
}

// backHere reports whether parent, as this member's cache shows it, is
// the object uid, labelled for this member, and not as a call let it go
// (gone): a parent this call let go may still show, at the version it
// went at, in a cache behind; at any other, it came back
// (TestAChildIsNotLetGoWhenItsParentComesBackKeptDuringItsFirst409Retry,
// TestAChildIsNotLetGoWhenItsParentComesBackDrainingAnewDuringItsFirst409Retry).
func (a acker) backHere(parent metav1.Object, uid types.UID, gone letGone) bool {
	if parent.GetUID() != uid || parent.GetLabels()[a.shard.Label()] != a.shard.Member {
		return false
	}
	rv, went := gone[uid]
	return !went || (rv != deletedMark && parent.GetResourceVersion() != rv)
}

// deletedMark is the version letGone records for an object found
// deleted (404): no version of that object (its UID) comes back, so any
// the cache shows is a cache behind
// (TestAChildOfADrainingParentFoundDeletedIsLetGoThoughTheCacheThenShowsItsLastWriteBeforeTheDelete).
const deletedMark = "deleted"

// deleted is obj as found deleted: its resourceVersion deletedMark, so
// that letGoChildren records it so.
func deleted(obj metav1.Object) metav1.Object {
	return &metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(), ResourceVersion: deletedMark}
}

// acknowledge lets go of a drained object for call c, once no other call
// may be reconciling it (inFlight.waitFor): one merge PATCH that removes
// both labels if the object is still at the resourceVersion the cache
// gave. A 409 means it changed since, often by the reconcile that just
// ran under its key. So acknowledge waits, within the call's budget, for
// the cache to show the change, and, if the cache then holds the same
// object (its UID) still drained here and still one c lets go (still),
// waits again for what may hold it now and tries again at the cache's
// version: the same footing as the first try, a version
// every call that begins later reads; up to ackTries PATCHes, each 409
// given its look
// (TestADrainUnderARingKeyIsLetGoThoughTheKeysReconcileWritesThatObjectEachPass,
// TestAnAcknowledgementRetriedAfterA409WaitsForACallThatBeganReconcilingTheObjectMeanwhile,
// TestAnAcknowledgementRetriedAfterA409DoesNotLetGoAnObjectOfAnotherUID,
// TestAnAcknowledgementRetriedAtAVersionTheCacheHasNotReachedDoesNotLetGoAnObjectALaterCallReconciles,
// TestASecond409WhoseChangeTheCacheShowsAMomentLaterGetsItsLook).
// A cache that shows another state, or no object, leaves it to that
// change's event, which brings the key back. A cache that does not move
// within the budget (a stalled watch, a webhook answering 409), or a
// 409 to the last try, is a failure
// (TestA409WhoseChangeTheCacheNeverShowsLeavesTheKeyRetried,
// TestASecond409WhoseChangeTheCacheNeverShowsLeavesTheKeyRetried,
// TestAnAcknowledgementRefusedEveryTimeTheCacheMovesIsTriedFiveTimesACall). Each
// request gives up after RequestTimeout on shard's Clock. Every failure,
// a context's end included, is marked KeepRetrying: no later event may
// bring the key back, and a queue's MaxRetries would leave the object
// drained for ever
// (TestADrainWhoseAcknowledgementFailedBrieflyIsLetGoUnderACappedRetryQueue,
// TestAnAcknowledgementCutShortByAPerCallDeadlineIsNotGivenUpUnderMaxRetries);
// Run still takes the end of its own context as no failure. An object
// whose parent is still here (not in goneParents, the parents this call
// let go) is not let go, at any try, asked after each wait for other
// calls (waitsForParent). went is the object as it left this member (let
// go, deleted, or out of its cache), nil if it did not: its drained
// children follow (letGoChildren).
func (a acker) acknowledge(ctx context.Context, c *call, obj metav1.Object, still func(metav1.Object) bool, goneParents letGone) (went metav1.Object, err error) {
	key := informer.KeyFor(obj)
	failed := func(err error) error {
		return workqueue.KeepRetrying(fmt.Errorf("sharding: acknowledging the drain of %s: %w", key, err))
	}
	for try := 1; ; try++ {
		if a.waitsForParent(obj, goneParents) { // asked before the wait, which may be long, and after it
			return nil, nil // its parent goes first, or the sharder takes its drain back: see waitsForParent
		}
		err := a.busy.waitFor(ctx, c, obj)
		if err == nil && a.waitsForParent(obj, goneParents) {
			return nil, nil
		}
		if err == nil {
			err = patchAcknowledgement(ctx, a.client, a.resource, key, obj.GetResourceVersion(), a.shard)
		}
		switch {
		case err == nil: // let go
			return obj, nil
		case apierrors.IsNotFound(err): // deleted meanwhile: no version of it comes back
			return deleted(obj), nil
		case !apierrors.IsConflict(err):
			return nil, failed(err)
		case try == ackTries:
			return nil, failed(fmt.Errorf("refused %d times, at the version the cache showed each time: %w", ackTries, err))
		}
		now, err := cacheMoves(ctx, &c.cache, key, obj.GetResourceVersion(), a.cached)
		if err != nil {
			return nil, failed(err)
		}
		if now == nil {
			return obj, nil // it left the cache: moved or deleted meanwhile
		}
		if now.GetUID() != obj.GetUID() || now.GetLabels()[a.shard.Label()] != a.shard.Member || now.GetLabels()[a.shard.DrainLabel()] == "" || !still(now) {
			return nil, nil // changed otherwise: see above
		}
		obj = now
	}
}

// ackTries is how many PATCHes acknowledge sends for one object in a
// call, each after the cache showed why the one before was refused: as
// many as client-go's retry.DefaultRetry tries an update that conflicts.
const ackTries = 5

// errCacheStill says a member's cache did not show, within its wait, the
// change the API server refused an acknowledgement for.
var errCacheStill = errors.New("the member's cache did not show the change a 409 reported")

// cacheMoves waits, within budget, until the cache's object at key is
// not at resourceVersion rv any more, and returns it (nil if the cache
// holds none: it left). It looks every cachePoll on the process's time,
// not on shard's Clock, which a test or the simulator may hold still: the
// cache moves with the watch, not with that clock
// (TestAnAcknowledgementRetriedAfterA409DoesNotWaitForTheShardsClockToBeStepped).
// It fails with errCacheStill once the budget is spent, or with ctx's
// error when ctx ends
// (TestAnAcknowledgementCutShortByItsCtxWhileWaitingForTheCacheLeavesItsKeyQueued).
func cacheMoves(ctx context.Context, budget *cacheBudget, key informer.Key, rv string, cached func(informer.Key) (metav1.Object, bool)) (metav1.Object, error) {
	wait := budget.begin()
	defer wait.end()
	for looked := false; ; looked = true {
		now, ok := cached(key)
		switch {
		case !ok:
			return nil, nil
		case now.GetResourceVersion() != rv:
			return now, nil
		case looked && wait.spent(): // one look after the 409 at least
			return nil, errCacheStill
		}
		t := time.NewTimer(cachePoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// cacheBudget is how long one call of a Reconciler may wait for its
// cache after 409s, all its waits together: RequestTimeout, on shard's
// Clock or on the process's time, whichever passes it first, and a look
// of cachePoll after each 409 however much is left. Only those waits
// spend it: not the waits for other calls in between, nor the requests
// (TestTheWaitAfterA409EndsWhenTheShardsClockPassesRequestTimeout,
// TestACallsWaitsForTheCacheAfter409sDoNotAddUpPerObject,
// TestACallWhoseOwnObjectAndAnotherAreDrainedWaitsForTheCacheOneRequestTimeoutInAll,
// TestAHolderThatReconcilesLongerThanRequestTimeoutDoesNotSpendTheWaitAfterA409,
// TestAHolderWaitAfterAnEarlierObjects409DoesNotSpendALaterObjectsWaitForTheCache,
// TestALaterObjectsWaitAfterA409IsNotSpentByAnEarlierObjectsRefusal,
// TestACallsWaitsForTheCacheAreOneRequestTimeoutPlusALookPerRefusedObject).
// A call's own goroutine alone uses it.
type cacheBudget struct {
	shard           Shard
	byClock, bySelf time.Duration // spent so far, on each clock
}

// cacheWait is one wait of a call for its cache, spending its budget.
type cacheWait struct {
	budget                *cacheBudget
	clock                 informer.Clock
	clockStart, selfStart time.Time
}

// begin starts a wait.
func (b *cacheBudget) begin() cacheWait {
	clock := b.shard.Clock
	if clock == nil {
		clock = informer.RealClock{}
	}
	return cacheWait{budget: b, clock: clock, clockStart: clock.Now(), selfStart: time.Now()}
}

// spent reports whether the budget's waits, this one included, have
// passed RequestTimeout on either clock.
func (w cacheWait) spent() bool {
	limit := w.budget.shard.requestTimeout()
	byClock, bySelf := w.elapsed()
	return w.budget.byClock+byClock >= limit || w.budget.bySelf+bySelf >= limit
}

// end charges the wait to its budget.
func (w cacheWait) end() {
	byClock, bySelf := w.elapsed()
	w.budget.byClock += byClock
	w.budget.bySelf += bySelf
}

// elapsed is how long the wait has taken on each clock. A Shard.Clock
// stepped back during it counts as no time: a wait never gives budget
// back (TestAWaitOnAShardClockSteppedBackDoesNotRefundTheCallsCacheBudget).
func (w cacheWait) elapsed() (byClock, bySelf time.Duration) {
	return max(0, w.clock.Now().Sub(w.clockStart)), time.Since(w.selfStart)
}

// cachePoll is how often acknowledge looks at the cache after a 409.
const cachePoll = 10 * time.Millisecond

// patchAcknowledgement sends acknowledge's PATCH, guarded by rv.
func patchAcknowledgement(ctx context.Context, client *rest.RESTClient, resource string, key informer.Key, rv string, shard Shard) error {
	patch, err := labelPatch(rv, map[string]*string{shard.Label(): nil, shard.DrainLabel(): nil})
	if err != nil {
		return err
	}
	ctx, cancel := informer.WithTimeout(ctx, shard.Clock, shard.requestTimeout())
	defer cancel()
	return client.Patch(types.MergePatchType).NamespaceIfScoped(key.Namespace, key.Namespace != "").
		Resource(resource).Name(key.Name).Body(patch).Do(ctx).Error()
}

// labelPatch is a JSON merge patch that sets (or, for nil, removes)
// labels, and fails with 409 Conflict unless the object is at
// resourceVersion rv.
func labelPatch(rv string, labels map[string]*string) ([]byte, error) {
	return json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv, "labels": labels}})
}
