package readyourwrites

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/internal/nilcheck"
	si "github.com/listwatch/informer/sharedinformer"
)

// Cache is one informer's cache as a Guard checks it: the writes recorded
// through it are checked against that informer. Make one with Track for
// every informer whose objects the controller writes, the owners' own
// (a status update) and their children's.
type Cache[T informer.Object] struct {
	guard    *Guard
	informer *si.Informer[T]
	// arrivals, set when g's Options.OpaqueResourceVersions is, is the
	// handler that sees written versions arrive; nil otherwise.
	arrivals *arrivals[T]
	// registration is arrivals' handler on the informer, which the
	// guard's Close removes; nil without arrivals.
	registration *si.Registration
	// trackErr is why arrivals could not be registered (the informer has
	// stopped); Wrote returns it.
	trackErr error
	// written holds the versions of the writes recorded and not yet
	// applied, by key, without arrivals: a delete waits for them too.
	written written
}

// Track returns the Cache through which writes of inf's objects are
// recorded in g. With Options.OpaqueResourceVersions it registers a
// handler on inf, which sees each written version arrive, until g is
// closed.
func Track[T informer.Object](g *Guard, inf *si.Informer[T]) *Cache[T] {
	c := &Cache[T]{guard: g, informer: inf}
	if !g.opts.OpaqueResourceVersions {
		return c
	}
	errClosed := errors.New("readyourwrites: Track: the guard is closed")
	if g.isClosed() {
		c.trackErr = errClosed
		return c
	}
	c.arrivals, c.registration, c.trackErr = newArrivals(g.opts.Name, inf)
	if c.trackErr == nil {
		reg := c.registration
		remove := func() { _ = inf.RemoveEventHandler(reg) } // an error: removed already
		if !g.tracking(remove) {                             // closed meanwhile
			remove()
			c.arrivals, c.registration, c.trackErr = nil, nil, errClosed
		}
	}
	return c
}

// Write sends req, a create, update or patch of one of the informer's
// objects, decodes the object the API server answers into out (emptied
// first, so that out holds the answer alone, as a typed client-go call's
// result does: TestWriteLeavesInOutTheAnswerAloneNotTheRequestBeneathIt;
// out may be the request's body, which req encoded when it was built,
// but never an object from the cache: pitfall 2), and
// records, under owner (the key being reconciled), that the cache must
// show that object at that resourceVersion or later before owner's next
// reconcile (with Options.OpaqueResourceVersions: at exactly that
// resourceVersion, or a change of that object after it). A generateName
// create is recorded like any other: the answer names the object. A
// failed write records nothing and returns its error; a write that
// succeeded but cannot be recorded (its answer unreadable, or with no
// resourceVersion) returns an error wrapping ErrAnswerUnreadable. A nil req or out
// is an error, and nothing is sent
// (TestWriteRefusesANilRequestOrANilAnswerBeforeSendingAnything); so is
// a Cache that cannot record (Track found its guard closed or its
// informer stopped), since a write stored and then reported as failed
// would be sent again (TestAWriteThroughACacheThatCannotRecordIsNotSent).
func (c *Cache[T]) Write(ctx context.Context, owner informer.Key, req *rest.Request, out T) error {
	switch {
	case req == nil:
		return fmt.Errorf("readyourwrites: %v: Write for %s: the request is nil", c, owner)
	case nilcheck.IsNil(out):
		return fmt.Errorf("readyourwrites: %v: Write for %s: out is nil, so the answer would have nowhere to go; nothing was sent", c, owner)
	case c.trackErr != nil:
		return fmt.Errorf("readyourwrites: %v: Write for %s: %w; nothing was sent", c, owner, c.trackErr)
	}
	result := req.Do(ctx)
	if err := result.Error(); err != nil {
		return err
	}
	// The write succeeded: an answer that cannot be decoded must not look
	// like a failure, or the caller would send it again (for a
	// generateName create: a second object). out is emptied first: a JSON
	// decode fills an object in place, and would keep what the request
	// held and the answer does not.
	if v := reflect.ValueOf(out); v.Kind() == reflect.Pointer {
		v.Elem().SetZero()
	}
	if err := result.Into(out); err != nil {
		return fmt.Errorf("%w: %v", ErrAnswerUnreadable, err)
	}
	// An answer with no resourceVersion (not kube-apiserver's) is no
	// failure either: the write is stored, though there is nothing to
	// wait for (TestAWriteWhoseAnswerHasNoResourceVersionSaysItSucceeded).
	if err := c.Wrote(owner, out); err != nil {
		return fmt.Errorf("%w: %v", ErrAnswerUnreadable, err)
	}
	return nil
}

// ErrAnswerUnreadable says that a write through Write succeeded but its
// answer could not be decoded, or named no resourceVersion, so nothing
// was recorded: do not send the write again; the key's next reconcile
// may read a cache without it.
var ErrAnswerUnreadable = errors.New("readyourwrites: the write succeeded, its answer could not be read")

// Wrote records a write made without Write: obj is what the API server
// answered, whose resourceVersion is the write's. An answer that says the
// write deleted the object (it removed the last finalizer of an object
// being deleted) is recorded as Deleted is: seen once the cache no longer
// holds that object. It fails, recording
// nothing, if obj is nil or has no resourceVersion, or if the Cache's
// informer had stopped when Track needed to register on it.
func (c *Cache[T]) Wrote(owner informer.Key, obj metav1.Object) error {
	if nilcheck.IsNil(obj) {
		return fmt.Errorf("readyourwrites: %v: Wrote for %s: the answer is nil", c, owner)
	}
	key, rv := informer.KeyFor(obj), obj.GetResourceVersion()
	if rv == "" {
		return fmt.Errorf("readyourwrites: %v: Wrote for %s: %s has no resourceVersion (not an API server's answer?)", c, owner, key)
	}
	if c.trackErr != nil {
		return fmt.Errorf("readyourwrites: %v: Wrote for %s: %w", c, owner, c.trackErr)
	}
	if deletedBy(obj) {
		return c.Deleted(owner, key, obj.GetUID(), nil)
	}
	if c.arrivals != nil {
		a := c.arrivals.expect(key, rv, obj.GetUID(), c.cached(key))
		c.guard.record(owner, c.waitFor(key, a, nil))
		return nil
	}
	if comparable(rv) {
		c.written.add(key, rv, c.applied) // another never counts as applied
	}
	c.guard.record(owner, write{progress: c.informer.Progress, seen: func() bool {
		if cached, ok := c.informer.Indexer().Get(key); ok && atOrAfter(cached.GetResourceVersion(), rv) {
			return true
		}
		return c.applied(rv)
	}})
	return nil
}

// deletedBy reports whether obj, the answer to a write, says that the
// write deleted the object: it removed the last finalizer of an object
// being deleted with no grace period left, so the API server deleted it.
// The answer is then the object's last stored state, at a resourceVersion
// the cache may hold already; only the object's absence shows the write.
//
// The API server marks an object it cannot delete yet for its finalizers
// with a grace period of zero, so that is required, not only its
// absence. Two objects with a deletionTimestamp and no finalizers still
// exist: a Pod in its grace period (a grace period above zero), and a
// Namespace being emptied (no grace period at all: its own finalizers
// are in spec.finalizers, and its deletion is the namespace
// controller's).
func deletedBy(obj metav1.Object) bool {
	grace := obj.GetDeletionGracePeriodSeconds()
	return obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 && grace != nil && *grace == 0
}

// Delete sends req, a DELETE of the informer's object key, and records
// under owner that the cache must no longer show that object: absent, or
// an object of that name with another UID (made since), or, when the
// object only got a deletionTimestamp (it has finalizers), that object at
// the resourceVersion the DELETE answered or later. The UID comes from
// the answer: the object, or the Status whose details name it. A failed
// DELETE records nothing and returns its error (a NotFound included:
// the object was gone already, and there is nothing to wait for). A nil
// req is an error, as in Write (TestDeleteRefusesANilRequest), and so is
// a Cache that cannot record: nothing is sent
// (TestADeleteThroughACacheThatCannotRecordIsNotSent).
func (c *Cache[T]) Delete(ctx context.Context, owner, key informer.Key, req *rest.Request) error {
	switch {
	case req == nil:
		return fmt.Errorf("readyourwrites: %v: Delete of %s for %s: the request is nil", c, key, owner)
	case c.trackErr != nil:
		return fmt.Errorf("readyourwrites: %v: Delete of %s for %s: %w; nothing was sent", c, key, owner, c.trackErr)
	}
	result := req.Do(ctx)
	if err := result.Error(); err != nil {
		return err
	}
	// The DELETE succeeded. An answer the client's scheme cannot decode
	// leaves the UID unknown: then only the object's absence counts.
	answer, _ := result.Get()
	var uid types.UID
	var terminating metav1.Object // the object, if it still exists
	if status, ok := answer.(*metav1.Status); ok {
		if status.Details != nil {
			uid = status.Details.UID
		}
	} else if obj, err := meta.Accessor(answer); err == nil {
		uid = obj.GetUID()
		if obj.GetDeletionTimestamp() != nil {
			terminating = obj
		}
	}
	return c.Deleted(owner, key, uid, terminating)
}

// Deleted records a DELETE made without Delete: key is the object's key,
// uid its UID if known (else "": then only absence counts), terminating
// the object the DELETE answered if it still exists (finalizers), or nil
// (a typed nil counts as nil). Absence counts only once the cache has
// applied the writes of key recorded before, through this Cache, where
// their resourceVersions are integers (with OpaqueResourceVersions,
// once they have arrived): a create and a delete in one reconcile wait
// for both. A version that is not an integer is never known to be
// applied, so by default a delete does not wait for it, and another
// key's delete of that object is let go by absence alone
// (TestByDefaultADeleteDoesNotWaitForAnEarlierWriteWhoseVersionIsNotAnInteger):
// for such a server, set OpaqueResourceVersions. It fails, recording
// nothing, if the Cache cannot record, as Wrote does
// (TestDeletedThroughACacheThatCannotRecordSaysSo).
func (c *Cache[T]) Deleted(owner, key informer.Key, uid types.UID, terminating metav1.Object) error {
	if c.trackErr != nil {
		return fmt.Errorf("readyourwrites: %v: Deleted of %s for %s: %w", c, key, owner, c.trackErr)
	}
	var terminatingRV string
	if !nilcheck.IsNil(terminating) {
		terminatingRV = terminating.GetResourceVersion()
	}
	if c.arrivals != nil && uid == "" && !nilcheck.IsNil(terminating) {
		uid = terminating.GetUID()
	}
	gone := func() bool {
		cached, ok := c.informer.Indexer().Get(key)
		return !ok || uid != "" && cached.GetUID() != uid
	}
	if c.arrivals != nil {
		// The writes of key before this one are seen as they arrive; the
		// delete itself, where the UID is known, when its object's delete
		// does: the arrivals handler, which runs behind the cache, then
		// wakes the key (TestAnOpaqueDeleteOfUnknownUIDWakesWhenTheWriteBeforeItArrives).
		// With no UID, which object it deleted is not known, only that it
		// came after the writes before it: those must arrive, and then the
		// cache must not hold the key; no delete event can say it was this
		// one (TestAnOpaqueCreateThenDeleteWithoutUIDsStillHoldsTheKey,
		// TestANoUIDDeleteIsNotMarkedByAnotherObjectsDeleteEvent,
		// TestAnEarlierObjectsDeleteDoesNotMarkANoUIDDelete,
		// TestAnUnknownDeleteIsNotTakenForAnEarlierObjectsDeleteRecordedLate).
		a := c.arrivals.expectDelete(key, terminatingRV, uid, c.cached(key))
		if a == nil { // no UID, nothing written before it: absence alone
			c.guard.record(owner, write{progress: c.informer.Progress, seen: gone})
			return nil
		}
		c.guard.record(owner, c.waitFor(key, a, gone))
		return nil
	}
	before := c.written.newest(key, c.applied)
	c.guard.record(owner, write{progress: c.informer.Progress, seen: func() bool {
		cached, ok := c.informer.Indexer().Get(key)
		switch {
		case !ok, uid != "" && cached.GetUID() != uid:
			return before == "" || c.applied(before)
		case terminatingRV != "":
			return cached.GetDeletionTimestamp() != nil && atOrAfter(cached.GetResourceVersion(), terminatingRV)
		default:
			return false
		}
	}})
	return nil
}

// waitFor is the record of a write of key under opaque resourceVersions,
// a: seen once it has arrived (see arrivals), or, for a delete (gone
// set), once the writes it came after have arrived and gone says the
// object is gone from the cache.
func (c *Cache[T]) waitFor(key informer.Key, a *arrival, gone func() bool) write {
	return write{
		progress: c.arrivals.Progress,
		seen:     func() bool { return c.arrivals.hasArrived(a) || gone != nil && c.arrivals.afterArrived(a) && gone() },
		drop:     func(stale bool) { c.arrivals.forget(key, a, stale) },
	}
}

// cached returns a func that reads key from the informer's cache.
func (c *Cache[T]) cached(key informer.Key) func() (T, bool) {
	return func() (T, bool) { return c.informer.Indexer().Get(key) }
}

// applied reports whether the informer's cache has applied rv or later.
// With resourceVersions that cannot be compared it never has: then only
// the object itself can say (see atOrAfter).
func (c *Cache[T]) applied(rv string) bool {
	cmp, err := si.CompareResourceVersions(c.informer.LastSyncResourceVersion(), rv)
	return err == nil && cmp >= 0
}

// comparable reports whether rv is a resourceVersion that can be
// ordered (an integer, KEP-5504), which applied can ever say of.
func comparable(rv string) bool {
	_, err := si.CompareResourceVersions(rv, rv)
	return err == nil
}

// atOrAfter reports whether resourceVersion have is rv or later: by
// number where both are comparable, by equality otherwise.
func atOrAfter(have, rv string) bool {
	cmp, err := si.CompareResourceVersions(have, rv)
	if err != nil {
		return have == rv
	}
	return cmp >= 0
}

// String names the cache by its informer.
func (c *Cache[T]) String() string { return fmt.Sprintf("readyourwrites.Cache(%s)", c.informer.Name()) }
