package sharding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	informer "github.com/listwatch/informer"
	"github.com/listwatch/informer/workqueue"
)

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
	kept     *keptChildren
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
// calls (waitsForParent); nor is one whose drain is stale, naming another
// controller than the version each PATCH is guarded by has
// (staleDrain). went is the object as it left this member (let
// go, deleted, or out of its cache), nil if it did not: its drained
// children follow (letGoChildren).
func (a acker) acknowledge(ctx context.Context, c *call, obj metav1.Object, still func(metav1.Object) bool, goneParents letGone) (went metav1.Object, err error) {
	key := informer.KeyFor(obj)
	failed := func(err error) error {
		return workqueue.KeepRetrying(fmt.Errorf("sharding: acknowledging the drain of %s: %w", key, err))
	}
	for try := 1; ; try++ {
		if a.shard.staleDrain(obj) || a.waitsForParent(obj, goneParents) { // asked before the wait, which may be long, and after it
			return nil, nil // drained for another controller (drainvalue.go), or its parent goes first, or the sharder takes its drain back: see waitsForParent
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
		case apierrors.IsNotFound(err): // deleted meanwhile, or with its CRD: no version of it comes back
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
